// A stand-in for Google's https://accounts.google.com/gsi/client, served by pgreflect's test identity
// provider so that pages using the pre-built button or One Tap work with no internet and no Google project.
// It has the same global API (google.accounts.id.initialize, renderButton, prompt, cancel,
// disableAutoSelect) and the same HTML API (a #g_id_onload element with data-client_id, data-callback,
// data-nonce, data-use_fedcm_for_prompt, data-auto_prompt, and .g_id_signin elements for buttons). The
// page's callback receives {credential, select_by, clientId}, the credential being an ID token that the test
// provider signed with the page's nonce.
(function () {
  "use strict";
  var issuer = __ISSUER__;
  var config = null;

  function credential(selectBy) {
    var body = new URLSearchParams({ client_id: config.client_id || "" });
    if (config.nonce) body.set("nonce", config.nonce);
    // A form POST is a simple cross-origin request: no preflight.
    return fetch(issuer + "/gsi/credential", { method: "POST", body: body })
      .then(function (r) {
        return r.json().then(function (j) {
          if (!r.ok) throw new Error("test provider: " + (j.error_description || j.error || r.status));
          return j;
        });
      })
      .then(function (j) {
        var response = { credential: j.credential, select_by: selectBy, clientId: config.client_id };
        var cb = config.callback;
        if (typeof cb === "string") cb = window[cb];
        if (typeof cb !== "function") throw new Error("test provider: the callback is not a global function");
        cb(response);
      });
  }

  function fail(e) {
    console.error(e);
  }

  function initialize(c) {
    config = Object.assign({}, c);
  }

  function renderButton(parent, options) {
    if (!config) throw new Error("google.accounts.id.initialize must be called before renderButton");
    var b = document.createElement("button");
    b.type = "button";
    b.className = "gsi-standin-button";
    b.textContent = (options && options.text === "signup_with" ? "Sign up" : "Sign in") + " with Test Provider";
    b.onclick = function () {
      credential("btn").catch(fail);
    };
    parent.replaceChildren(b);
  }

  function notification(type) {
    return {
      getMomentType: function () { return type; },
      isDisplayMoment: function () { return type === "display"; },
      isDisplayed: function () { return type === "display"; },
      isNotDisplayed: function () { return false; },
      isSkippedMoment: function () { return type === "skipped"; },
      isDismissedMoment: function () { return type === "dismissed"; },
    };
  }

  function cancel() {
    var el = document.getElementById("gsi-standin-onetap");
    if (el) el.remove();
  }

  // prompt shows the One Tap card; with FedCM the browser draws it, here the page does.
  function prompt(listener) {
    if (!config) throw new Error("google.accounts.id.initialize must be called before prompt");
    cancel();
    var card = document.createElement("div");
    card.id = "gsi-standin-onetap";
    card.setAttribute("role", "dialog");
    card.style.cssText = "position:fixed;top:16px;right:16px;padding:16px;background:#fff;border:1px solid #ccc;" +
      "border-radius:8px;box-shadow:0 2px 8px rgba(0,0,0,.2);font:14px sans-serif;z-index:2147483647";
    var title = document.createElement("p");
    title.textContent = "Sign in to this site with the Test Provider";
    var go = document.createElement("button");
    go.type = "button";
    go.id = "gsi-standin-continue";
    go.textContent = "Continue";
    var close = document.createElement("button");
    close.type = "button";
    close.textContent = "Close";
    var fedcm = config.use_fedcm_for_prompt === true || config.use_fedcm_for_prompt === "true";
    go.onclick = function () {
      cancel();
      credential(fedcm ? "fedcm" : "user_1tap").catch(fail);
    };
    close.onclick = function () {
      cancel();
      if (listener) listener(notification("dismissed"));
    };
    card.append(title, go, close);
    document.body.appendChild(card);
    if (listener) listener(notification("display"));
  }

  // The HTML API: read the data attributes once the document is there.
  function fromMarkup() {
    var onload = document.getElementById("g_id_onload");
    if (!onload) return;
    var d = onload.dataset;
    initialize({
      client_id: d.client_id,
      callback: d.callback,
      nonce: d.nonce,
      use_fedcm_for_prompt: d.use_fedcm_for_prompt === "true",
      auto_select: d.auto_select === "true",
    });
    document.querySelectorAll(".g_id_signin").forEach(function (el) {
      renderButton(el, { type: el.dataset.type, text: el.dataset.text });
    });
    if (d.auto_prompt !== "false") prompt();
  }

  window.google = window.google || {};
  window.google.accounts = window.google.accounts || {};
  window.google.accounts.id = {
    initialize: initialize,
    renderButton: renderButton,
    prompt: prompt,
    cancel: cancel,
    disableAutoSelect: function () {},
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", fromMarkup);
  } else {
    fromMarkup();
  }
})();
