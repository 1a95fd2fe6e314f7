// custom-agent serve: the loader. The server answers a page request that
// carries only the cookie with this data-free loader: cookies ignore ports,
// so a program on another port of this host may hold the cookie, but not
// this tab's key. The key came once, in the body of the login link's
// answer; it is kept in sessionStorage (this origin only: scheme, host and
// port) and sent as a header. A new tab of this UI asks the open tabs for
// it over a BroadcastChannel (also this origin only).
"use strict";

(function () {
	const NAME = "custom-agent-key";
	const HEADER = "X-Custom-Agent-Key";
	const exchange = document.getElementById("ca-exchange");
	let key = sessionStorage.getItem(NAME) || "";
	let waiting = false;
	const bc = window.BroadcastChannel ? new BroadcastChannel(NAME) : null;

	function say(text) {
		const m = document.getElementById("ca-message");
		if (m) m.textContent = text;
	}
	function noKey(why) {
		say(why + " Open a fresh link from custom-agent serve (send it SIGUSR1 for one; it prints it).");
	}

	if (bc) {
		bc.onmessage = function (m) {
			if (m.data === "want") {
				if (key) bc.postMessage({ key: key });
				return;
			}
			if (waiting && m.data && typeof m.data.key === "string" && /^[0-9a-f]{64}$/.test(m.data.key)) {
				waiting = false;
				key = m.data.key;
				sessionStorage.setItem(NAME, key);
				load();
			}
		};
	}

	// load fetches this page with the key and puts it in place of the
	// loader; the page's scripts are started anew (parsed ones never run).
	function load() {
		fetch(location.href, { credentials: "same-origin", cache: "no-store", headers: { [HEADER]: key } }).then(function (r) {
			const type = r.headers.get("Content-Type") || "";
			return r.text().then(function (body) {
				if (r.status === 401) {
					if (sessionStorage.getItem(NAME) === key) sessionStorage.removeItem(NAME);
					noKey("This tab is not signed in to this server (was it restarted?).");
					return;
				}
				if (!type.startsWith("text/html")) {
					document.body.textContent = "";
					document.body.appendChild(document.createElement("pre")).textContent = body;
					return;
				}
				// The loader's head (its stylesheet is loaded: a deferred
				// script runs after it) stays; the page's body and title
				// come in, and its scripts are started anew (parsed ones
				// never run).
				const doc = new DOMParser().parseFromString(body, "text/html");
				const scripts = Array.from(doc.querySelectorAll("script[src]")).map(function (s) { const src = s.getAttribute("src"); s.remove(); return src; });
				document.title = doc.title;
				document.body.replaceWith(document.adoptNode(doc.body));
				scripts.forEach(function (src) {
					const s = document.createElement("script");
					s.src = src;
					s.async = false; // in order
					document.head.appendChild(s);
				});
			});
		}).catch(function (e) { say("The page could not be loaded: " + e); });
	}

	if (exchange) {
		key = exchange.dataset.key;
		sessionStorage.setItem(NAME, key);
		history.replaceState(null, "", exchange.dataset.next);
		load();
	} else if (key) {
		load();
	} else if (bc) {
		waiting = true;
		bc.postMessage("want");
		setTimeout(function () {
			if (waiting) { waiting = false; noKey("This tab has no key, and no other tab of this UI is open to lend one."); }
		}, 2000);
	} else {
		noKey("This tab has no key.");
	}
})();
