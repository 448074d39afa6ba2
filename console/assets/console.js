// The settings page and the GraphiQL tab of the console. The server renders the project's URLs and keys
// into #pgreflect-config.
(function () {
  'use strict';
  var cfg = JSON.parse(document.getElementById('pgreflect-config').textContent);

  function $(id) { return document.getElementById(id); }

  $('project-url').textContent = cfg.apiUrl;
  $('api-url').value = cfg.apiUrl;
  $('graphql-url').value = cfg.graphqlUrl;
  $('anon-key').value = cfg.anonKey;
  if (cfg.serviceRoleKey) {
    $('service-role-key').value = cfg.serviceRoleKey;
    document.querySelectorAll('.service-role').forEach(function (el) { el.hidden = false; });
  }
  $('curl-example').textContent =
    "curl -X POST '" + cfg.graphqlUrl + "' \\\n" +
    "  -H 'apikey: " + cfg.anonKey + "' \\\n" +
    "  -H 'Content-Type: application/json' \\\n" +
    "  -d '{\"query\": \"{ __typename }\"}'";

  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    button.addEventListener('click', function () {
      var input = $(button.dataset.copy);
      var done = function () {
        button.textContent = 'Copied';
        setTimeout(function () { button.textContent = 'Copy'; }, 1500);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(done);
      } else {
        var type = input.type;
        input.type = 'text';
        input.select();
        document.execCommand('copy');
        input.type = type;
        done();
      }
    });
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
  $('user-jwt').addEventListener('input', function () {
    var jwt = $('user-jwt').value.trim();
    var role = jwt ? roleOf(jwt) : 'anon';
    $('request-role').textContent = role ? 'role: ' + role : 'not a JWT';
  });
  ['jwt-form', 'settings-form'].forEach(function (id) {
    $(id).addEventListener('submit', function (e) { e.preventDefault(); });
  });

  var mounted = false;
  function show() {
    var page = (location.hash || '').indexOf('#api-docs/graphql') === 0 ? 'graphiql' : 'settings';
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
  }
  window.addEventListener('hashchange', show);
  show();
})();
