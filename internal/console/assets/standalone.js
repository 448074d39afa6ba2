// The standalone GraphiQL page: the endpoint and the API key come from ?url=...&apikey=... or the form;
// &from=console (the console's link) shows a link back to the console.
(function () {
  'use strict';
  function $(id) { return document.getElementById(id); }
  var params = new URLSearchParams(location.search);
  if (params.get('url')) $('endpoint-url').value = params.get('url');
  if (params.get('apikey')) $('endpoint-apikey').value = params.get('apikey');
  // Opened from the console's menu: a way back to it.
  if (params.get('from') === 'console') $('back-link').hidden = false;

  function connect() {
    window.pgreflectGraphiQL.mount($('graphiql'), {
      url: function () { return $('endpoint-url').value.trim(); },
      apikey: function () { return $('endpoint-apikey').value.trim(); },
      jwt: function () { return $('user-jwt').value; },
      banner: $('schema-banner')
    });
  }

  $('endpoint-form').addEventListener('submit', function (e) {
    e.preventDefault();
    connect();
  });
  if ($('endpoint-url').value && $('endpoint-apikey').value) {
    connect();
  } else {
    var banner = $('schema-banner');
    banner.hidden = false;
    banner.className = 'banner banner-info';
    banner.textContent = 'Enter the GraphQL endpoint (…/graphql/v1) and an API key, then Connect.';
  }
})();
