// API Docs > GraphQL > Trusted documents: the operations requests may name by id (and, under
// [graphql] trusted_documents = "only", the only ones anon and authenticated may run), read-only from the
// management API (GET /v1/projects/{ref}/graphql/documents) with the management token. Everything shown is
// set as text, never as HTML.
(function () {
  'use strict';
  var consoleAPI = window.pgreflectConsole;
  var cfg = consoleAPI.cfg;
  function $(id) { return document.getElementById(id); }

  function status(text, kind) { consoleAPI.status('documents-status', text, kind); }

  // operationOf is the first operation's type and name in a document, for the table.
  function operationOf(text) {
    var m = /\b(query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)?/.exec(text);
    return m ? m[1] + (m[2] ? ' ' + m[2] : '') : 'query';
  }

  function row(id, text) {
    var tr = document.createElement('tr');
    tr.dataset.documentId = id;
    [id, operationOf(text)].forEach(function (value) {
      var td = document.createElement('td');
      td.textContent = value;
      tr.appendChild(td);
    });
    var pre = document.createElement('pre');
    pre.textContent = text;
    var td = document.createElement('td');
    td.appendChild(pre);
    tr.appendChild(td);
    return tr;
  }

  function load() {
    var table = $('documents-table');
    status('Loading…');
    consoleAPI.credentials().then(function (c) {
      return fetch('/v1/projects/' + encodeURIComponent(cfg.projectRef || '') + '/graphql/documents',
        { cache: 'no-store', headers: { Authorization: 'Bearer ' + (c.managementToken || '') } });
    }).then(function (res) {
      if (!res.ok) {
        throw new Error(res.status === 404
          ? 'The management API is off on this server (it was started without an auth database).'
          : 'Listing the trusted documents failed (HTTP ' + res.status + ').');
      }
      return res.json();
    }).then(function (manifest) {
      var body = $('documents-body');
      body.textContent = '';
      var ids = Object.keys(manifest).sort();
      ids.forEach(function (id) { body.appendChild(row(id, manifest[id])); });
      table.hidden = ids.length === 0;
      table.dataset.loaded = 'true';
      status(ids.length === 0 ? 'No trusted documents yet: add them with `pgreflect documents push`.' : '');
    }).catch(function (err) { status(err.message, 'error'); });
  }

  $('documents-reload').addEventListener('click', load);
  document.addEventListener('pgreflect:page', function (e) {
    if (e.detail === 'documents') load();
  });
})();
