// Schema > Access, GraphQL, Lint and Drift: read-only pages over api/schema/* (internal/schemaview), which the
// console serves behind its own access rule. Everything shown comes from those answers and is set as text,
// never as HTML.
(function () {
  'use strict';
  var consoleAPI = window.pgreflectConsole;
  var cfg = consoleAPI.cfg;
  function $(id) { return document.getElementById(id); }
  var el = consoleAPI.el;
  var status = consoleAPI.status;
  // getJSON fetches api/schema/<path>; a failure becomes an Error with the server's message.
  function getJSON(path) {
    return fetch('api/schema/' + path, { credentials: 'same-origin', cache: 'no-store' }).then(function (res) {
      return res.text().then(function (body) {
        var j = null;
        try { j = JSON.parse(body); } catch (e) { /* not JSON */ }
        if (!res.ok) throw new Error(((j && j.message) || 'request failed') + ' (HTTP ' + res.status + ')');
        return j;
      });
    });
  }
  var kinds = { r: 'table', p: 'table', v: 'view', m: 'materialized view', f: 'foreign table' };
  var commands = ['select', 'insert', 'update', 'delete'];
  function mark(on) { return el('span', { className: on ? 'yes' : 'no', text: on ? '✓' : '✗' }); }
  function flagList(flags) {
    return (flags || []).map(function (f) { return el('div', { className: 'flag flag-' + f.level, text: f.level + ': ' + f.message }); });
  }

  // ---- Access ----

  var access = null;
  function relationCard(r, roles) {
    var name = r.schema + '.' + r.name;
    var card = el('div', { className: 'relation', id: 'access-' + name, 'data-relation': name });
    card.dataset.flagged = r.flags.length ? 'true' : 'false';
    var rls = r.kind === 'r' || r.kind === 'p'
      ? el('span', { className: 'tag' + (r.rls ? '' : ' off'), text: r.rls ? 'RLS on' + (r.forceRLS ? ' (forced)' : '') : 'RLS off' })
      : el('span', { className: 'tag off', text: 'no RLS (' + (kinds[r.kind] || r.kind) + ')' });
    var what = r.kind === 'p' ? 'partitioned table' : r.partition ? 'partition' : kinds[r.kind] || r.kind;
    card.appendChild(el('h3', {}, [el('span', { text: what + ' ' + name }), rls]));
    flagList(r.flags).forEach(function (f) { card.appendChild(f); });

    // What each role gets in GraphQL, with its table privileges.
    var head = el('tr', {}, [el('th', { text: 'role' })].concat(commands.map(function (c) { return el('th', { text: c.toUpperCase() }); }))
      .concat([el('th', { text: 'GraphQL' })]));
    var body = el('tbody');
    roles.forEach(function (role) {
      var g = r.grants[role.name] || {};
      var q = r.graphql[role.name] || {};
      var api = q.type
        ? ['type ' + q.type, q.collection, q.byPk, q.insert, q.update, q.delete].filter(Boolean).join(', ')
        : 'none: ' + q.missing;
      body.appendChild(el('tr', { 'data-role': role.name }, [el('td', { text: role.name + (role.bypassRLS ? ' (bypasses RLS)' : '') })]
        .concat(commands.map(function (c) { return el('td', {}, [mark(g[c])]); }))
        .concat([el('td', { className: 'graphql', text: api })])));
    });
    card.appendChild(el('table', { className: 'grants' }, [el('thead', {}, [head]), body]));

    if (r.policies.length) {
      var pbody = el('tbody');
      r.policies.forEach(function (p) {
        pbody.appendChild(el('tr', {}, [el('td', { text: p.name }), el('td', { text: p.command + (p.permissive ? '' : ' (restrictive)') }),
          el('td', { text: (p.roles || []).join(', ') }), el('td', {}, [el('code', { text: p.using || '' })]),
          el('td', {}, [el('code', { text: p.withCheck || '' })])]));
      });
      card.appendChild(el('table', { className: 'policies' }, [el('thead', {}, [el('tr', {}, ['policy', 'command', 'roles', 'USING', 'WITH CHECK']
        .map(function (h) { return el('th', { text: h }); }))]), pbody]));
    }

    // Columns: each role's privileges and field.
    var cbody = el('tbody');
    r.columns.forEach(function (c) {
      cbody.appendChild(el('tr', {}, [el('td', { text: c.name }), el('td', { text: c.type })].concat(roles.map(function (role) {
        var g = (c.grants || {})[role.name] || {};
        var field = (c.fields || {})[role.name];
        var privileges = ['select', 'insert', 'update'].filter(function (p) { return g[p]; }).join(' ') || 'none';
        return el('td', { text: privileges + (field ? ' → ' + field : '') });
      }))));
    });
    card.appendChild(el('table', { className: 'columns' }, [el('thead', {}, [el('tr', {}, [el('th', { text: 'column' }), el('th', { text: 'type' })]
      .concat(roles.map(function (role) { return el('th', { text: role.name }); })))]), cbody]));
    return card;
  }

  function renderAccess() {
    var list = $('schema-access-list');
    list.textContent = '';
    if (!access) return;
    var term = $('schema-access-search').value.trim().toLowerCase();
    var onlyFlagged = $('schema-access-flagged').checked;
    access.relations.forEach(function (r) {
      var name = r.schema + '.' + r.name;
      if (term && name.toLowerCase().indexOf(term) < 0) return;
      if (onlyFlagged && !r.flags.length) return;
      list.appendChild(relationCard(r, access.roles));
    });
    var fbody = $('schema-functions-body');
    fbody.textContent = '';
    access.functions.forEach(function (f) {
      var name = f.schema + '.' + f.name;
      if (term && name.toLowerCase().indexOf(term) < 0) return;
      if (onlyFlagged && !f.flags.length) return;
      var where = access.roles.map(function (role) {
        var g = f.graphql[role.name] || {};
        return role.name + ': ' + (g.field || 'none (' + g.missing + ')');
      });
      var cell = el('td', {}, [el('code', { text: name + '(' + f.arguments + ') returns ' + f.returns })]
        .concat(f.securityDefiner ? [' ', el('span', { className: 'tag danger', text: 'SECURITY DEFINER' })] : [])
        .concat(flagList(f.flags)));
      fbody.appendChild(el('tr', { 'data-function': name, id: 'access-fn:' + name }, [cell, el('td', { text: f.volatility }),
        el('td', { text: access.roles.filter(function (role) { return f.execute[role.name]; }).map(function (role) { return role.name; }).join(', ') || 'nobody' }),
        el('td', { text: where.join('\n'), className: 'where' })]));
    });
    $('schema-functions').hidden = fbody.childElementCount === 0;
    var target = decodeURIComponent((location.hash.match(/^#schema\/access\/(.+)$/) || [])[1] || '');
    if (target && $('access-' + target)) {
      $('access-' + target).classList.add('target');
      $('access-' + target).scrollIntoView({ block: 'start' });
    }
  }

  function loadAccess() {
    status('schema-access-status', 'Loading…');
    getJSON('access').then(function (a) {
      access = a;
      var n = a.relations.length;
      status('schema-access-status', n + ' relations, ' + a.functions.length + ' functions; ' +
        (a.flags.error || 0) + ' errors and ' + (a.flags.warning || 0) + ' warnings flagged.', a.flags.error ? 'error' : 'info');
      $('page-schema-access').dataset.loaded = 'true';
      renderAccess();
    }).catch(function (e) { status('schema-access-status', e.message, 'error'); });
  }
  $('schema-access-search').addEventListener('input', renderAccess);
  $('schema-access-flagged').addEventListener('change', renderAccess);
  $('schema-access-reload').addEventListener('click', loadAccess);

  // ---- GraphQL ----

  var sdl = null;
  // blocks splits an SDL into its definitions, each with the type it defines.
  function blocks(text) {
    var out = [];
    var current = [];
    text.split('\n').forEach(function (line) {
      current.push(line);
      if (/^\}/.test(line) || /^(scalar|union) /.test(line)) {
        out.push(current.join('\n'));
        current = [];
      }
    });
    if (current.join('').trim()) out.push(current.join('\n'));
    return out.map(function (b) {
      var m = /^(?:type|input|enum|interface|scalar|union)\s+([_A-Za-z][_0-9A-Za-z]*)/m.exec(b);
      return { text: b.replace(/^\n+/, ''), name: m ? m[1] : '' };
    });
  }
  function renderGraphQL() {
    var host = $('schema-graphql-blocks');
    host.textContent = '';
    if (!sdl) return;
    var term = $('schema-graphql-search').value.trim().toLowerCase();
    var shown = 0;
    var all = blocks(sdl.sdl);
    // the definitions named after the term first, then those that merely mention it
    var matches = all.filter(function (b) { return !term || b.text.toLowerCase().indexOf(term) >= 0; });
    var named = function (b) { return term && b.name.toLowerCase().indexOf(term) >= 0 ? 0 : 1; };
    matches.sort(function (x, y) { return named(x) - named(y); });
    matches.forEach(function (b) {
      shown++;
      var block = el('div', { className: 'sdl-block', 'data-type': b.name });
      var src = sdl.sources[b.name];
      if (src) {
        // enums have no entry on the Access page: named, not linked
        var link = src.kind === 'type' ? src.kind + ' ' + src.name
          : el('a', { href: '#schema/access/' + encodeURIComponent(src.name), text: src.kind + ' ' + src.name });
        block.appendChild(el('p', { className: 'sdl-source' }, ['from ', link]));
      }
      var fnFields = Object.keys(sdl.sources).filter(function (k) { return k.indexOf(b.name + '.') === 0; });
      if (fnFields.length) {
        var line = el('p', { className: 'sdl-source' });
        fnFields.forEach(function (k, i) {
          if (i) line.appendChild(document.createTextNode('; '));
          line.appendChild(document.createTextNode(k.slice(b.name.length + 1) + ': '));
          line.appendChild(el('a', { href: '#schema/access/' + encodeURIComponent('fn:' + sdl.sources[k].name),
            text: 'function ' + sdl.sources[k].name }));
        });
        block.appendChild(line);
      }
      block.appendChild(el('pre', { text: b.text }));
      host.appendChild(block);
    });
    $('schema-graphql-count').textContent = shown + ' of ' + all.length + ' definitions';
  }
  function loadGraphQL() {
    var role = $('schema-graphql-role').value;
    status('schema-graphql-status', 'Loading…');
    getJSON('graphql?role=' + encodeURIComponent(role)).then(function (s) {
      sdl = s;
      status('schema-graphql-status', '');
      $('page-schema-graphql').dataset.loaded = role;
      renderGraphQL();
    }).catch(function (e) { status('schema-graphql-status', e.message, 'error'); });
  }
  $('schema-graphql-role').addEventListener('change', loadGraphQL);
  $('schema-graphql-search').addEventListener('input', renderGraphQL);

  // ---- Lint ----

  function loadLint() {
    var list = $('schema-lint-list');
    status('schema-lint-status', 'Loading…');
    getJSON('lint').then(function (r) {
      list.textContent = '';
      r.findings.forEach(function (f) {
        var card = el('div', { className: 'finding', 'data-rule': f.rule, 'data-object': f.object }, [
          el('h3', {}, [el('span', { className: 'tag' + (f.level === 'error' ? ' danger' : ''), text: f.level }),
            el('span', { text: f.object }), el('span', { className: 'muted', text: f.rule + ' · ' + f.roles.join(', ') })]),
          el('p', { text: f.reason })]);
        if (f.fix) {
          var copy = el('button', { type: 'button', text: 'Copy' });
          copy.addEventListener('click', function () { consoleAPI.copyText(f.fix, copy); });
          card.appendChild(el('pre', { text: f.fix }));
          card.appendChild(copy);
        }
        list.appendChild(card);
      });
      var warnings = r.findings.length - r.errors;
      status('schema-lint-status', r.findings.length ? r.errors + ' errors, ' + warnings + ' warnings.' : 'Nothing to report.',
        r.errors ? 'error' : 'info');
      $('page-schema-lint').dataset.loaded = 'true';
    }).catch(function (e) { status('schema-lint-status', e.message, 'error'); });
  }
  $('schema-lint-reload').addEventListener('click', loadLint);

  // ---- Drift ----

  function showDrift(path) {
    var table = $('schema-drift-table');
    status('schema-drift-status', 'Loading…');
    getJSON(path).then(function (d) {
      var body = $('schema-drift-body');
      body.textContent = '';
      d.changes.forEach(function (c) {
        body.appendChild(el('tr', { 'data-level': c.level }, [el('td', { text: c.level }), el('td', { text: c.role || '' }),
          el('td', { text: c.message }), el('td', { text: c.reason || '' })]));
      });
      table.hidden = d.changes.length === 0;
      var counts = {};
      d.changes.forEach(function (c) { counts[c.level] = (counts[c.level] || 0) + 1; });
      status('schema-drift-status', d.changes.length
        ? d.changes.length + ' changes from ' + d.from + ' to ' + d.to + ': ' + (counts.BREAKING || 0) + ' breaking, ' +
          (counts.DANGEROUS || 0) + ' dangerous, ' + (counts.SAFE || 0) + ' safe.'
        : 'No changes from ' + d.from + ' to ' + d.to + '.');
      $('page-schema-drift').dataset.loaded = path;
    }).catch(function (e) { table.hidden = true; status('schema-drift-status', e.message, 'error'); });
  }
  $('schema-drift-form').addEventListener('submit', function (e) {
    e.preventDefault();
    showDrift('drift?' + new URLSearchParams({ from: $('schema-drift-from').value, to: $('schema-drift-to').value }));
  });
  $('schema-drift-snapshots').addEventListener('click', function () { showDrift('drift?snapshot=1'); });

  document.addEventListener('pgreflect:page', function (e) {
    if (!cfg.hasSchema && e.detail.indexOf('schema-') === 0) {
      status(e.detail + '-status', 'This server serves no Schema pages.', 'error');
      return;
    }
    if (e.detail === 'schema-access') {
      if (access) renderAccess();
      else loadAccess();
    }
    if (e.detail === 'schema-graphql' && !sdl) loadGraphQL();
    if (e.detail === 'schema-lint') loadLint();
    if (e.detail === 'schema-drift' && !$('page-schema-drift').dataset.loaded) $('schema-drift-form').requestSubmit();
  });
})();
