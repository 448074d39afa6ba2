// Authentication > Providers, Users and URL Configuration. Providers reads and writes the project's auth
// configuration through the management API (GET and PATCH /v1/projects/{ref}/config/auth) with the management
// token, and shows which values were stored there over supabase/config.toml's (GET .../overrides), with a
// reset (DELETE .../overrides/{field}); Users reads GET /auth/v1/admin/users with the service_role key. Everything shown comes from those
// answers and is set as text, never as HTML.
(function () {
  'use strict';
  var consoleAPI = window.pgreflectConsole;
  var cfg = consoleAPI.cfg;

  function $(id) { return document.getElementById(id); }
  var el = consoleAPI.el;
  var status = consoleAPI.status;

  var errorOf = consoleAPI.errorOf;

  // ---- Providers ----

  // managementJSON calls GET/PATCH .../config/auth plus path ('' for the configuration itself).
  function managementJSON(method, body, path) {
    return consoleAPI.management(method, '/config/auth' + (path || ''), body);
  }

  // The values stored through this page or the management API that differ from supabase/config.toml's, by
  // field: they win until reset (GET .../config/auth/overrides).
  var stored = {};
  var fieldLabels = { enabled: 'Enabled', client_id: 'Client IDs', secret: 'Client secret', url: 'Issuer URL',
    skip_nonce_check: 'Skip nonce checks', email_optional: 'Users without an email',
    additional_client_ids: 'Additional client IDs' };
  function storedFields(name) {
    var prefix = 'external_' + name + '_';
    return Object.keys(stored).filter(function (k) { return k.indexOf(prefix) === 0; }).sort();
  }
  // sourceLine says where the provider's values come from, with a button that forgets the stored ones.
  function sourceLine(name, id) {
    var prefix = 'external_' + name + '_';
    return overrideLine(storedFields(name), function (k) { return fieldLabels[k.slice(prefix.length)] || k.slice(prefix.length); },
      id('source'), id('reset'), 'providers-status', loadProviders.bind(null, name));
  }

  // overrideLine is the console's, on the auth settings' stored overrides.
  function overrideLine(fields, labelOf, lineID, resetID, statusID, reload) {
    return consoleAPI.overrideLine(fields, stored, labelOf, { line: lineID, reset: resetID, status: statusID },
      function (k) { return managementJSON('DELETE', null, '/overrides/' + encodeURIComponent(k)); }, reload);
  }

  var displayNames = { github: 'GitHub', gitlab: 'GitLab', linkedin_oidc: 'LinkedIn (OIDC)',
    slack_oidc: 'Slack (OIDC)', workos: 'WorkOS', azure: 'Azure' };
  function displayName(p) { return displayNames[p] || p.charAt(0).toUpperCase() + p.slice(1); }

  // The providers that can sign in: pgreflect speaks OpenID Connect only, so Google and providers given their
  // issuer URL. The OpenID ones Supabase names are always listed; others once they have an issuer URL or were
  // added on this page.
  var oidcProviders = ['google', 'azure', 'gitlab', 'keycloak'];
  var added = [];
  // Placeholders that fit each provider: what its console calls the client ID, and its issuer's shape.
  var placeholders = {
    google: { client_id: '123456789012-abc.apps.googleusercontent.com, then iOS and Android client IDs',
      url: 'empty: https://accounts.google.com (a test provider\'s address otherwise)' },
    azure: { client_id: 'Application (client) ID, such as 00000000-0000-0000-0000-000000000000',
      url: 'https://login.microsoftonline.com/<tenant ID>/v2.0' },
    gitlab: { client_id: 'Application ID', url: 'https://gitlab.com (or your GitLab\'s address)' },
    keycloak: { client_id: 'Client ID of the realm\'s client', url: 'https://keycloak.example.com/realms/<realm>' }
  };
  var otherPlaceholders = { client_id: 'Client ID', url: 'https://idp.example.com (the provider\'s OpenID Connect issuer)' };
  function placeholder(name, field) { return (placeholders[name] || otherPlaceholders)[field]; }

  function providerNames(conf) {
    var names = oidcProviders.concat(added.filter(function (n) { return oidcProviders.indexOf(n) < 0; }));
    Object.keys(conf).forEach(function (k) {
      var m = /^external_(.+)_url$/.exec(k);
      if (m && conf[k] && names.indexOf(m[1]) < 0) names.push(m[1]);
    });
    // Enabled ones first, then by name.
    return names.sort(function (a, b) {
      var ea = conf['external_' + a + '_enabled'] ? 0 : 1, eb = conf['external_' + b + '_enabled'] ? 0 : 1;
      return ea - eb || (a < b ? -1 : a > b ? 1 : 0);
    });
  }

  function checkbox(id, label, checked) {
    var input = el('input', { type: 'checkbox', id: id });
    input.checked = !!checked;
    return el('label', { className: 'check', 'for': id }, [input, document.createTextNode(' ' + label)]);
  }

  function providerForm(name, conf, open) {
    var f = function (field) { return conf['external_' + name + '_' + field]; };
    var id = function (field) { return 'provider-' + name + '-' + field; };
    var enabled = !!f('enabled');
    var summary = el('summary', {}, [
      el('span', { className: 'provider-name', text: displayName(name) }),
      el('span', { className: 'tag' + (enabled ? '' : ' off'), id: id('state'), text: enabled ? 'Enabled' : 'Disabled' })
    ]);
    var clientID = el('input', { id: id('client_id'), spellcheck: 'false', placeholder: placeholder(name, 'client_id') });
    clientID.value = f('client_id') || '';
    var issuer = el('input', { id: id('url'), spellcheck: 'false', placeholder: placeholder(name, 'url') });
    issuer.value = f('url') || '';
    var secret = el('input', { id: id('secret'), type: 'password', spellcheck: 'false',
      placeholder: f('secret') ? 'set; leave empty to keep it' : 'not set' });
    var result = el('span', { className: 'muted', id: id('result'), role: 'status' });
    var save = el('button', { type: 'submit', id: id('save'), text: 'Save' });
    var form = el('form', { className: 'provider-form', 'data-provider': name, autocomplete: 'off' }, [
      checkbox(id('enabled'), 'Enable Sign in with ' + displayName(name), enabled),
      el('label', { 'for': id('url'), text: 'Issuer URL (OpenID Connect)' }), issuer,
      el('p', { className: 'hint', text: name === 'google'
        ? 'Leave empty for Google.' : 'Where the provider publishes /.well-known/openid-configuration, without that path.' }),
      el('label', { 'for': id('client_id'), text: 'Client IDs' }), clientID,
      el('p', { className: 'hint', text: 'Comma-separated, the web client ID first. ID tokens of any of them are accepted.' }),
      el('label', { 'for': id('secret'), text: 'Client secret (for OAuth)' }), secret,
      checkbox(id('skip_nonce_check'), 'Skip nonce checks', f('skip_nonce_check')),
      el('p', { className: 'hint', text: 'Accept ID tokens without a nonce (for iOS sign-in, where the nonce cannot be read).' }),
      checkbox(id('email_optional'), 'Allow users without an email', f('email_optional')),
      el('div', { className: 'provider-actions' }, [save, result]),
      sourceLine(name, id)
    ]);
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      var prefix = 'external_' + name + '_';
      var body = {};
      // Only what changed is sent: a value saved here overrides supabase/config.toml's until it is reset, so
      // saving one field must not freeze the others.
      var edited = { enabled: $(id('enabled')).checked, client_id: clientID.value.trim(), url: issuer.value.trim(),
        skip_nonce_check: $(id('skip_nonce_check')).checked, email_optional: $(id('email_optional')).checked };
      Object.keys(edited).forEach(function (field) {
        var was = f(field);
        if (typeof edited[field] === 'boolean' ? edited[field] !== !!was : edited[field] !== (was || '')) {
          body[prefix + field] = edited[field];
        }
      });
      if (secret.value !== '') body[prefix + 'secret'] = secret.value;
      save.disabled = true;
      result.textContent = 'Saving…';
      managementJSON('PATCH', body).then(function (conf) {
        return managementJSON('GET', null, '/overrides').then(function (o) {
          setStored(o);
          renderProviders(conf, name);
          $(id('result')).textContent = 'Saved';
        });
      }).catch(function (err) {
        save.disabled = false;
        result.textContent = err.message;
        result.className = 'error-text';
      });
    });
    var details = el('details', { className: 'provider', id: 'provider-' + name }, [summary, form]);
    details.open = !!open;
    return details;
  }

  function renderProviders(conf, open) {
    lastConf = conf;
    var list = $('provider-list');
    list.textContent = '';
    providerNames(conf).forEach(function (name) {
      list.appendChild(providerForm(name, conf, name === open));
    });
    list.dataset.loaded = 'true';
  }

  // Another OpenID provider: a form for the name, saved like the others.
  var lastConf = {};
  $('provider-add').addEventListener('submit', function (e) {
    e.preventDefault();
    var input = $('provider-add-name'), name = input.value.trim().toLowerCase();
    if (!/^[a-z0-9_]+$/.test(name)) {
      status('providers-status', 'A provider name is lowercase letters, digits and _.', 'error');
      return;
    }
    status('providers-status', '');
    if (added.indexOf(name) < 0) added.push(name);
    input.value = '';
    renderProviders(lastConf, name);
    var opened = $('provider-' + name);
    if (opened) opened.scrollIntoView({ block: 'center' });
  });

  function setStored(o) {
    stored = {};
    (o.overrides || []).forEach(function (x) { stored[x.field] = x; });
  }

  // loadConfig reads the configuration and the stored overrides for a page, saying so in its statusID banner,
  // and gives the configuration to show.
  function loadConfig(statusID, show) {
    if (!cfg.hasManagement) {
      status(statusID, 'The management API is off: this server was started without a management token.');
      return;
    }
    status(statusID, 'Loading…');
    Promise.all([managementJSON('GET'), managementJSON('GET', null, '/overrides')]).then(function (r) {
      setStored(r[1]);
      status(statusID, '');
      show(r[0]);
    }).catch(function (err) { status(statusID, err.message, 'error'); });
  }

  function loadProviders(open) {
    $('provider-list').dataset.loaded = '';
    loadConfig('providers-status', function (conf) { renderProviders(conf, typeof open === 'string' ? open : 'google'); });
  }

  // ---- Users ----

  var perPage = 50;
  var usersPage = 1;

  function when(ts) { return ts ? new Date(ts).toLocaleString() : '—'; }

  function userRow(u) {
    var identities = el('ul', { className: 'identities' }, (u.identities || []).map(function (i) {
      return el('li', {}, [
        el('span', { className: 'tag', text: i.provider }),
        document.createTextNode(' ' + (i.email || '') + ' '),
        el('code', { className: 'muted', text: i.id })
      ]);
    }));
    return el('tr', { 'data-user-id': u.id }, [
      el('td', { className: 'user-email', text: u.email || '—' }),
      el('td', {}, [identities]),
      el('td', { text: when(u.created_at) }),
      el('td', { text: when(u.last_sign_in_at) }),
      el('td', {}, [el('code', { text: u.id })])
    ]);
  }

  function loadUsers() {
    var table = $('users-table');
    table.dataset.loaded = '';
    if (!cfg.hasServiceRoleKey) {
      status('users-status', 'Listing users needs the service_role key, which this server was not given.');
      return;
    }
    status('users-status', 'Loading…');
    consoleAPI.credentials().then(function (c) {
      var key = c.serviceRoleKey || '';
      return fetch('/auth/v1/admin/users?page=' + usersPage + '&per_page=' + perPage, { cache: 'no-store',
        headers: { apikey: key, Authorization: 'Bearer ' + key } });
    }).then(function (res) {
      if (!res.ok) return errorOf(res).then(function (msg) { throw new Error(msg); });
      var total = parseInt(res.headers.get('X-Total-Count') || '0', 10);
      return res.json().then(function (body) {
        var users = body.users || [];
        var tbody = $('users-body');
        tbody.textContent = '';
        users.forEach(function (u) { tbody.appendChild(userRow(u)); });
        table.hidden = users.length === 0;
        var first = (usersPage - 1) * perPage;
        $('users-range').textContent = users.length ? (first + 1) + '–' + (first + users.length) + ' of ' + total : '';
        $('users-prev').disabled = usersPage <= 1;
        $('users-next').disabled = first + users.length >= total;
        status('users-status', total === 0 ? 'No users yet: they appear here after their first sign-in.' : '');
        table.dataset.loaded = 'true';
      });
    }).catch(function (err) { status('users-status', err.message, 'error'); });
  }

  $('users-prev').addEventListener('click', function () { usersPage = Math.max(1, usersPage - 1); loadUsers(); });
  $('users-next').addEventListener('click', function () { usersPage++; loadUsers(); });
  $('users-reload').addEventListener('click', loadUsers);

  // ---- URL Configuration ----

  // loadedURLs are the values the form was filled with: only the fields that differ from them are sent.
  var loadedURLs = null;
  var urlLabels = { site_url: 'Site URL', uri_allow_list: 'Redirect URLs', jwt_exp: 'JWT expiry' };
  function fillURLs(conf) {
    var line = overrideLine(Object.keys(urlLabels).filter(function (k) { return stored[k]; }),
      function (k) { return urlLabels[k]; }, 'urls-source', 'urls-reset', 'urls-status', loadURLs);
    $('urls-source').replaceWith(line);
    loadedURLs = { site_url: conf.site_url || '', uri_allow_list: conf.uri_allow_list || '', jwt_exp: conf.jwt_exp };
    $('site-url').value = loadedURLs.site_url;
    $('redirect-urls').value = loadedURLs.uri_allow_list.split(',').filter(Boolean).join('\n');
    $('jwt-exp').value = loadedURLs.jwt_exp;
    $('urls-form').dataset.loaded = 'true';
  }
  function loadURLs() {
    $('urls-form').dataset.loaded = '';
    loadConfig('urls-status', fillURLs);
  }
  $('urls-form').addEventListener('submit', function (e) {
    e.preventDefault();
    if (!loadedURLs) return;
    var edited = {
      site_url: $('site-url').value.trim(),
      uri_allow_list: $('redirect-urls').value.split(/[\n,]/).map(function (s) { return s.trim(); }).filter(Boolean).join(','),
      jwt_exp: $('jwt-exp').value.trim() === '' ? loadedURLs.jwt_exp : Number($('jwt-exp').value)
    };
    var body = {};
    Object.keys(edited).forEach(function (k) { if (edited[k] !== loadedURLs[k]) body[k] = edited[k]; });
    var result = $('urls-result');
    result.className = 'muted';
    result.textContent = 'Saving…';
    managementJSON('PATCH', body).then(function (conf) {
      return managementJSON('GET', null, '/overrides').then(function (o) {
        setStored(o);
        fillURLs(conf);
        result.textContent = 'Saved';
      });
    }).catch(function (err) {
      result.textContent = err.message;
      result.className = 'error-text';
    });
  });

  document.addEventListener('pgreflect:page', function (e) {
    if (e.detail === 'providers') loadProviders();
    if (e.detail === 'users') loadUsers();
    if (e.detail === 'urls') loadURLs();
  });
})();
