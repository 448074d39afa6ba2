// The console's pages and its GraphiQL tab. The server renders the project's URLs, its anon key and what it
// has configured into #pgreflect-config; secrets (the service_role key, the management token) are fetched from
// api/credentials only when a page needs them.
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('pgreflect-config').textContent);

  function $(id) { return document.getElementById(id); }

  // el builds an element: attrs as attributes (text: its text, className: its class), children as nodes or text.
  // Everything the pages show from an answer goes through it or textContent, never through HTML.
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'className') e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }

  // status shows text in the banner of the given id (hidden when empty), as an error or as information.
  function status(id, text, kind) {
    var b = $(id);
    b.textContent = text || '';
    b.hidden = !text;
    b.className = 'banner ' + (kind === 'error' ? 'banner-error' : 'banner-info');
  }

  var credentialsPromise = null;
  // credentials resolves to {serviceRoleKey, managementToken} (either may be missing), fetched once.
  function credentials() {
    if (!credentialsPromise) {
      credentialsPromise = fetch('api/credentials', { credentials: 'same-origin', cache: 'no-store' })
        .then(function (res) {
          if (!res.ok) throw new Error('the console could not read its credentials (HTTP ' + res.status + ')');
          return res.json();
        })
        .catch(function (e) { credentialsPromise = null; throw e; });
    }
    return credentialsPromise;
  }

  // errorOf turns a failed answer into a sentence: the JSON message when there is one.
  function errorOf(res) {
    return res.text().then(function (body) {
      var msg = '';
      try {
        var j = JSON.parse(body);
        msg = j.message || j.msg || j.error_description || j.error || '';
      } catch (e) { /* not JSON: the server has no such route */ }
      if (res.status === 404 && !msg) {
        return 'Sign-in is off on this server (it was started without an auth database), so there is nothing to show.';
      }
      return (msg || 'request failed') + ' (HTTP ' + res.status + ')';
    });
  }

  // management calls the management API under this project (path: '/config/auth', '/postgrest'...) with the
  // management token: the answer's JSON, or an error with its message.
  function management(method, path, body) {
    return credentials().then(function (c) {
      var init = { method: method, cache: 'no-store',
        headers: { Authorization: 'Bearer ' + (c.managementToken || '') } };
      if (body) {
        init.headers['Content-Type'] = 'application/json';
        init.body = JSON.stringify(body);
      }
      return fetch('/v1/projects/' + encodeURIComponent(cfg.projectRef || '') + path, init);
    }).then(function (res) {
      if (!res.ok) return errorOf(res).then(function (msg) { throw new Error(msg); });
      return res.json();
    });
  }

  function shown(v) { return v === null || v === undefined || v === '' ? '(not set)' : String(v); }

  // overrideLine says whether fields (management API names) come from supabase/config.toml or were stored over
  // it (stored: the management API's overrides by field), with config.toml's values (never a secret's), and a
  // button that forgets the stored ones one by one (forget(field) resolves when done), then reload().
  function overrideLine(fields, stored, labelOf, ids, forget, reload) {
    if (fields.length === 0) {
      return el('p', { className: 'hint source', id: ids.line, text: 'Values from supabase/config.toml (or the defaults).' });
    }
    var parts = fields.map(function (k) {
      return /_secret$/.test(k) ? labelOf(k) : labelOf(k) + ' (config.toml: ' + shown(stored[k].file) + ')';
    });
    var reset = el('button', { type: 'button', className: 'secondary', id: ids.reset, text: 'Reset to config.toml' });
    reset.addEventListener('click', function () {
      reset.disabled = true;
      fields.reduce(function (done, k) {
        return done.then(function () { return forget(k); });
      }, Promise.resolve()).then(reload).catch(function (err) {
        reset.disabled = false;
        status(ids.status, err.message, 'error');
      });
    });
    return el('div', { className: 'source', id: ids.line }, [
      el('p', { className: 'hint', text: 'Set on this page or through the management API, overriding supabase/config.toml: ' + parts.join(', ') + '.' }),
      reset
    ]);
  }

  function copyText(text, button) {
    var label = button.textContent;
    var done = function () {
      button.textContent = 'Copied';
      setTimeout(function () { button.textContent = label; }, 1500);
    };
    // The clipboard API needs a secure context and the browser's permission; the old way needs neither.
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { copyBySelection(text); done(); });
      return;
    }
    copyBySelection(text);
    done();
  }

  function copyBySelection(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    document.execCommand('copy');
    document.body.removeChild(area);
  }

  $('project-url').textContent = cfg.apiUrl;
  $('project-name').value = cfg.projectName || '';
  $('project-ref').value = cfg.projectRef || '';
  $('general-api-url').value = cfg.apiUrl;
  $('api-url').value = cfg.apiUrl;
  $('graphql-url').value = cfg.graphqlUrl;
  if (cfg.searchPath && cfg.searchPath.length) {
    $('exposed-schemas').value = cfg.searchPath.join(', ');
  } else if (!cfg.hasManagement) { // else the management API tells them
    document.querySelectorAll('.exposed-schemas').forEach(function (el) { el.hidden = true; });
  }
  $('anon-key').value = cfg.anonKey;
  $('callback-url').value = cfg.apiUrl + '/auth/v1/callback';
  // The standalone page opens on this project, and links back here.
  $('standalone-link').href = 'graphiql.html?' + new URLSearchParams({ url: cfg.graphqlUrl, apikey: cfg.anonKey, from: 'console' });
  $('curl-example').textContent =
    "curl -X POST '" + cfg.graphqlUrl + "' \\\n" +
    "  -H 'apikey: " + cfg.anonKey + "' \\\n" +
    "  -H 'Content-Type: application/json' \\\n" +
    "  -d '{\"query\": \"{ __typename }\"}'";

  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    button.addEventListener('click', function () { copyText($(button.dataset.copy).value, button); });
  });

  // The service_role key is in the page only after a click on Reveal, and leaves it on Hide.
  if (!cfg.hasServiceRoleKey) {
    document.querySelectorAll('.service-role').forEach(function (el) { el.hidden = true; });
    document.querySelector('.service-role-missing').hidden = false;
  }
  $('reveal-service-role').addEventListener('click', function () {
    var input = $('service-role-key');
    var button = $('reveal-service-role');
    if (input.value) {
      input.value = '';
      button.textContent = 'Reveal';
      return;
    }
    credentials().then(function (c) {
      input.value = c.serviceRoleKey || '';
      button.textContent = 'Hide';
    }, function (e) { input.placeholder = e.message; });
  });
  $('copy-service-role').addEventListener('click', function () {
    var button = $('copy-service-role');
    credentials().then(function (c) { copyText(c.serviceRoleKey || '', button); });
  });

  // The role a request runs as, from the pasted JWT's payload (not verified here; the server does that).
  function roleOf(jwt) {
    var parts = jwt.trim().replace(/^Bearer\s+/i, '').split('.');
    if (parts.length !== 3) return null;
    try {
      var payload = JSON.parse(atob(parts[1].replace(/-/g, '+').replace(/_/g, '/')));
      return typeof payload.role === 'string' ? payload.role : null;
    } catch (e) {
      return null;
    }
  }
  function showRole() {
    var jwt = $('user-jwt').value.trim();
    var role = jwt ? roleOf(jwt) : 'anon';
    $('request-role').textContent = role ? 'role: ' + role : 'not a JWT';
  }
  $('user-jwt').addEventListener('input', showRole);

  // Run as: the server signs a short-lived token (api/token) for a role or a chosen user, instead of a JWT
  // pasted from elsewhere. Users are offered from the Users list when the service_role key is there.
  if (cfg.canMintToken) {
    $('run-as-box').hidden = false;
    $('run-as').addEventListener('change', function () {
      var user = $('run-as').value === 'authenticated';
      $('run-as-user').hidden = !user;
      if (!user || !cfg.hasServiceRoleKey || $('run-as-users').childElementCount) return;
      credentials().then(function (c) {
        var key = c.serviceRoleKey || '';
        return fetch('/auth/v1/admin/users?per_page=100', { cache: 'no-store', headers: { apikey: key, Authorization: 'Bearer ' + key } });
      }).then(function (res) { return res.ok ? res.json() : { users: [] }; }).then(function (body) {
        (body.users || []).forEach(function (u) {
          var o = document.createElement('option');
          o.value = u.id;
          o.label = u.email || u.id;
          o.dataset.email = u.email || '';
          $('run-as-users').appendChild(o);
        });
      }).catch(function () { /* no list: the ID is typed */ });
    });
    $('run-as-mint').addEventListener('click', function () {
      var role = $('run-as').value;
      if (!role) {
        $('user-jwt').value = '';
        showRole();
        return;
      }
      var sub = role === 'authenticated' ? $('run-as-user').value.trim() : '';
      var known = sub && document.querySelector('#run-as-users option[value="' + CSS.escape(sub) + '"]');
      var q = new URLSearchParams({ role: role, sub: sub, email: known ? known.dataset.email : '' });
      fetch('api/token?' + q, { credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
        return res.json().then(function (body) {
          if (!res.ok) throw new Error(body.message || 'HTTP ' + res.status);
          $('user-jwt').value = body.access_token;
          showRole();
        });
      }).catch(function (e) { $('request-role').textContent = e.message; });
    });
  }
  // Settings > API: the exposed schemas, editable through the management API (Supabase's GET and PATCH
  // /v1/projects/{ref}/postgrest) when this server has one, with where the value comes from and a reset to
  // supabase/config.toml's (GET and DELETE .../postgrest/overrides).
  function fillSchemas(conf, overrides) {
    var stored = {};
    (overrides.overrides || []).forEach(function (x) { stored[x.field] = x; });
    $('exposed-schemas').value = (conf.db_schema || '').split(',').filter(Boolean).join(', ');
    $('extra-search-path').textContent = conf.db_extra_search_path ?
      'extra_search_path (' + conf.db_extra_search_path.split(',').join(', ') + ')' : 'no extra schemas';
    $('schemas-source').replaceWith(overrideLine(Object.keys(stored), stored, function () { return 'Exposed schemas'; },
      { line: 'schemas-source', reset: 'schemas-reset', status: 'schemas-status' },
      function (k) { return management('DELETE', '/postgrest/overrides/' + encodeURIComponent(k)); }, loadSchemas));
    $('schemas-form').dataset.loaded = 'true';
  }
  function loadSchemas() {
    $('schemas-form').dataset.loaded = '';
    return Promise.all([management('GET', '/postgrest'), management('GET', '/postgrest/overrides')]).then(function (r) {
      status('schemas-status', '');
      fillSchemas(r[0], r[1]);
    }).catch(function (err) { status('schemas-status', err.message, 'error'); });
  }
  if (cfg.hasManagement) {
    $('exposed-schemas').readOnly = false;
    $('schemas-hint-file').hidden = true;
    $('schemas-hint-edit').hidden = false;
    $('schemas-actions').hidden = false;
    $('schemas-form').addEventListener('submit', function (e) {
      e.preventDefault();
      var value = $('exposed-schemas').value.split(',').map(function (s) { return s.trim(); }).filter(Boolean).join(',');
      var result = $('schemas-result');
      result.className = 'muted';
      result.textContent = 'Saving…';
      management('PATCH', '/postgrest', { db_schema: value }).then(loadSchemas).then(function () {
        result.textContent = 'Saved';
      }).catch(function (err) {
        result.textContent = err.message;
        result.className = 'error-text';
      });
    });
    document.addEventListener('pgreflect:page', function (e) { if (e.detail === 'settings') loadSchemas(); });
  }

  document.querySelectorAll('form.settings-form, #jwt-form').forEach(function (form) {
    form.addEventListener('submit', function (e) { e.preventDefault(); });
  });

  // The pages by hash; anything else shows Settings > API.
  var pages = { '#settings/general': 'general', '#settings/api': 'settings', '#auth/providers': 'providers',
    '#auth/users': 'users', '#auth/url-configuration': 'urls', '#api-docs/trusted-documents': 'documents',
    '#schema/access': 'schema-access', '#schema/graphql': 'schema-graphql', '#schema/lint': 'schema-lint',
    '#schema/drift': 'schema-drift' };
  var mounted = false;
  function show() {
    var hash = location.hash || '';
    // #schema/access/public.film opens the Access page on that relation.
    var page = hash.indexOf('#api-docs/graphql') === 0 ? 'graphiql' : pages[hash] ||
      (hash.indexOf('#schema/access/') === 0 ? 'schema-access' : 'settings');
    document.querySelectorAll('.page').forEach(function (el) { el.hidden = el.id !== 'page-' + page; });
    document.querySelectorAll('.nav-item[data-page]').forEach(function (el) {
      el.classList.toggle('active', el.dataset.page === page);
    });
    // GraphiQL measures its panes when it mounts, so it is mounted the first time its page is visible.
    if (page === 'graphiql' && !mounted) {
      mounted = true;
      window.pgreflectGraphiQL.mount($('graphiql'), {
        url: function () { return cfg.graphqlUrl; },
        apikey: function () { return cfg.anonKey; },
        jwt: function () { return $('user-jwt').value; },
        banner: $('schema-banner')
      });
    }
    document.dispatchEvent(new CustomEvent('pgreflect:page', { detail: page }));
  }

  // For auth-pages.js, which loads after this file and registers for pgreflect:page before the first show.
  window.pgreflectConsole = { cfg: cfg, credentials: credentials, copyText: copyText, el: el, status: status,
    errorOf: errorOf, management: management, overrideLine: overrideLine };
  window.addEventListener('hashchange', show);
  window.addEventListener('DOMContentLoaded', show);
})();
