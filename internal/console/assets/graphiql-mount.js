// Mounts GraphiQL on a pg_graphql endpoint (shared by the console and the standalone page). Every request
// carries the apikey header and, when a user JWT is given, Authorization: Bearer; the headers editor of
// GraphiQL can add or override headers.
(function () {
  'use strict';

  var ENABLE_INTROSPECTION = 'comment on schema public is e\'@graphql({"introspection": true})\';';

  var DEFAULT_QUERY =
    '# GraphiQL on pgreflect. Type a query, then press Ctrl-Enter (or the run button).\n' +
    '# The explorer and autocompletion need introspection, which a schema enables with\n' +
    '#   ' + ENABLE_INTROSPECTION + '\n' +
    '{\n  __typename\n}\n';

  // errorMessages lists the messages of a GraphQL error response or of a gateway error ({"message": ...}).
  function errorMessages(body) {
    if (!body || typeof body !== 'object') return [];
    if (Array.isArray(body.errors)) {
      return body.errors.map(function (e) { return e && e.message ? String(e.message) : JSON.stringify(e); });
    }
    if (typeof body.message === 'string' && !('data' in body)) return [body.message];
    return [];
  }

  // explainSchema turns the answer to GraphiQL's introspection query into a banner for the page, or null
  // when the schema loaded.
  function explainSchema(body) {
    var messages = errorMessages(body);
    if (messages.length === 0) return null;
    if (messages.some(function (m) { return m.indexOf('Unknown field "__schema"') >= 0; })) {
      return {
        kind: 'introspection',
        text: 'Introspection is disabled for this database, so the schema explorer, documentation and ' +
          'autocompletion are unavailable (queries still run). Enable it with:',
        code: ENABLE_INTROSPECTION
      };
    }
    return {kind: 'error', text: 'The schema could not be loaded: ' + messages.join('; ')};
  }

  function showBanner(el, info) {
    if (!el) return;
    el.textContent = '';
    el.hidden = !info;
    if (!info) return;
    el.className = 'banner banner-' + info.kind;
    el.dataset.kind = info.kind;
    var p = document.createElement('span');
    p.textContent = info.text + ' ';
    el.appendChild(p);
    if (info.code) {
      var code = document.createElement('code');
      code.textContent = info.code;
      el.appendChild(code);
    }
  }

  // isSubscription reports whether the operation GraphiQL runs is a subscription: the named one, else the only
  // one of the document.
  function isSubscription(params) {
    var ops = [], re = /(^|[\s}])(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/g, m;
    var text = String(params.query || '').replace(/#[^\n]*/g, '').replace(/"(?:[^"\\]|\\.)*"/g, '""');
    while ((m = re.exec(text))) ops.push({type: m[2], name: m[3] || ''});
    var op = params.operationName ? ops.find(function (o) { return o.name === params.operationName; }) : ops[0];
    return !!op && op.type === 'subscription';
  }

  // subscribe runs a subscription over graphql-transport-ws (the graphql-ws library's protocol) and gives its
  // answers as an async iterable, which GraphiQL shows one after another in the response pane.
  function subscribe(cfg, params, authorization) {
    var url = cfg.url().replace(/^http/, 'ws');
    return {
      [Symbol.asyncIterator]: function () {
        var queue = [], waiting = null, finished = false;
        var ws = new WebSocket(url, 'graphql-transport-ws');
        function push(item) {
          if (finished) return;
          if (item.done) finished = true;
          if (waiting) { var w = waiting; waiting = null; w(item); } else queue.push(item);
        }
        ws.onopen = function () {
          var payload = {apikey: cfg.apikey()};
          if (authorization) payload.Authorization = authorization;
          ws.send(JSON.stringify({type: 'connection_init', payload: payload}));
        };
        ws.onmessage = function (ev) {
          var m = JSON.parse(ev.data);
          if (m.type === 'connection_ack') ws.send(JSON.stringify({id: '1', type: 'subscribe', payload: params}));
          else if (m.type === 'next') push({value: m.payload, done: false});
          else if (m.type === 'error') { push({value: {errors: m.payload}, done: false}); push({done: true}); }
          else if (m.type === 'complete') push({done: true});
          else if (m.type === 'ping') ws.send(JSON.stringify({type: 'pong'}));
        };
        ws.onclose = function (ev) {
          if (ev.code !== 1000) {
            push({value: {errors: [{message: 'The subscription closed: ' + ev.code + ' ' + ev.reason}]}, done: false});
          }
          push({done: true});
        };
        return {
          next: function () {
            if (queue.length) return Promise.resolve(queue.shift());
            if (finished) return Promise.resolve({done: true});
            return new Promise(function (resolve) { waiting = resolve; });
          },
          return: function () {
            finished = true;
            ws.close(1000);
            return Promise.resolve({done: true});
          }
        };
      }
    };
  }

  function makeFetcher(cfg) {
    return async function (params, opts) {
      var headers = {'Content-Type': 'application/json', 'Accept': 'application/json', 'apikey': cfg.apikey()};
      var jwt = (cfg.jwt ? cfg.jwt() : '').trim();
      if (jwt) headers['Authorization'] = 'Bearer ' + jwt.replace(/^Bearer\s+/i, '');
      var extra = (opts && opts.headers) || {};
      Object.keys(extra).forEach(function (k) { headers[k] = String(extra[k]); });
      if (isSubscription(params)) return subscribe(cfg, params, headers['Authorization'] || headers['authorization']);
      var body;
      try {
        var resp = await fetch(cfg.url(), {
          method: 'POST', headers: headers, body: JSON.stringify(params), credentials: 'omit'
        });
        var text = await resp.text();
        try {
          body = JSON.parse(text);
        } catch (e) {
          body = {errors: [{message: 'HTTP ' + resp.status + ' with a body that is not JSON: ' + text.slice(0, 300)}]};
        }
      } catch (e) {
        body = {errors: [{message: 'Could not reach ' + cfg.url() + ': ' + e.message}]};
      }
      if (params && params.operationName === 'IntrospectionQuery') {
        var info = explainSchema(body);
        showBanner(cfg.banner, info);
        // data-schema tells scripts (and tests) whether the schema loaded: loaded, introspection or error.
        cfg.container.dataset.schema = info ? info.kind : 'loaded';
      }
      return body;
    };
  }

  // mount renders GraphiQL into container. cfg: {url(), apikey(), jwt(), banner: element}. Calling it again
  // on the same container replaces the instance (and reloads the schema).
  function mount(container, cfg) {
    if (!container._pgreflectRoot) container._pgreflectRoot = ReactDOM.createRoot(container);
    container._pgreflectGeneration = (container._pgreflectGeneration || 0) + 1;
    showBanner(cfg.banner, null);
    cfg = Object.assign({container: container}, cfg);
    delete container.dataset.schema;
    container._pgreflectRoot.render(React.createElement(GraphiQL, {
      key: container._pgreflectGeneration,
      fetcher: makeFetcher(cfg),
      defaultQuery: DEFAULT_QUERY,
      defaultEditorToolsVisibility: false,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false
    }));
  }

  window.pgreflectGraphiQL = {mount: mount, explainSchema: explainSchema};
})();
