// custom-agent serve: the one script. It builds live parts of pages with
// textContent only (never innerHTML): every text it shows comes from the
// log and may be hostile. State changes are POSTs of JSON with the
// X-Custom-Agent header, which the server requires. Every request carries
// this tab's key (boot.js) in X-Custom-Agent-Key: the cookie alone opens
// nothing.
"use strict";

(function () {
	const key = sessionStorage.getItem("custom-agent-key") || "";
	function headers(extra) {
		return Object.assign({ "X-Custom-Agent-Key": key }, extra || {});
	}
	function get(path) {
		return fetch(path, { credentials: "same-origin", cache: "no-store", headers: headers() });
	}
	function el(tag, cls, text) {
		const e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined) e.textContent = text;
		return e;
	}

	function secondsLeft(ms) { return Math.max(0, Math.ceil((ms - Date.now()) / 1000)); }

	function duration(s) {
		if (s < 60) return s + "s";
		const m = Math.floor(s / 60);
		return m < 60 ? m + "m" + (s % 60) + "s" : Math.floor(m / 60) + "h" + (m % 60) + "m";
	}

	// Countdowns and wait times tick every second.
	function tick() {
		document.querySelectorAll(".countdown[data-deadline]").forEach(function (e) {
			const left = secondsLeft(Number(e.dataset.deadline));
			e.textContent = left > 0 ? left + "s left, then it is denied" : "time is up: denied";
			e.dataset.left = String(left);
		});
		document.querySelectorAll(".waited[data-since]").forEach(function (e) {
			e.textContent = duration(Math.floor((Date.now() - Number(e.dataset.since)) / 1000));
		});
	}
	tick();
	setInterval(tick, 1000);

	// Notifications: the notice says a question waits, its tool and risk;
	// never the args.
	const notifyBtn = document.getElementById("notify");
	function canNotify() { return "Notification" in window && Notification.permission === "granted"; }
	if (notifyBtn && "Notification" in window && Notification.permission === "default") {
		notifyBtn.hidden = false;
		notifyBtn.addEventListener("click", function () {
			Notification.requestPermission().then(function () { notifyBtn.hidden = true; });
		});
	}

	// The queue stream: the count in the menu, notices, the queue page, and
	// the dialog closing when its question is answered elsewhere.
	const seen = new Set();
	let first = true;
	const dialog = document.getElementById("dialog");
	let answeredHere = false;
	let dialogChecked = false;
	function onQueue(data) {
		const items = JSON.parse(data);
		const count = document.getElementById("queue-count");
		if (count) count.textContent = items.length ? String(items.length) : "";
		const keys = new Set();
		items.forEach(function (it) {
			const k = it.sessionId + "/" + it.seq;
			keys.add(k);
			if (!seen.has(k) && !first && canNotify()) {
				new Notification("custom-agent: a question is waiting", { body: it.tool + " (risk: " + it.risk + ")", tag: k });
			}
		});
		const changed = keys.size !== seen.size || Array.from(keys).some(function (k) { return !seen.has(k); });
		seen.clear();
		keys.forEach(function (k) { seen.add(k); });
		if (!first && changed && document.body.dataset.page === "queue" && !dialog) location.reload();
		if (dialog && !answeredHere && !keys.has(dialog.dataset.session + "/" + dialog.dataset.seq)) {
			// The shared worker's first queue may be older than this page:
			// a question missing from it is closed only if the server says so.
			if (!first) closeDialog();
			else if (!dialogChecked) {
				dialogChecked = true;
				get(location.pathname).then(function (r) { return r.text(); }).then(function (html) {
					if (!new DOMParser().parseFromString(html, "text/html").getElementById("dialog")) closeDialog();
				});
			}
		}
		first = false;
	}
	// One stream for all tabs, through a shared worker where the browser
	// has them (each tab's own stream would use up the browser's six
	// connections to this server); else this tab's own.
	if (window.SharedWorker) {
		const w = new SharedWorker("/assets/queue-worker.js", { name: "custom-agent-queue" });
		w.port.onmessage = function (m) { onQueue(m.data); };
		w.port.start();
		w.port.postMessage({ key: key });
		window.addEventListener("pagehide", function () { w.port.postMessage("bye"); });
		window.addEventListener("pageshow", function (e) { if (e.persisted) location.reload(); });
	} else {
		caStream("/queue/events", headers, function (type, data) { if (type === "queue") onQueue(data); }, function () {});
	}

	// A closed dialog's countdown stops: the question no longer waits, and
	// its time running out denies nothing (it went on counting down to
	// "time is up: denied" under an allow).
	function stopCountdown() {
		const cd = document.getElementById("countdown");
		if (!cd || !cd.dataset.deadline) return;
		const left = secondsLeft(Number(cd.dataset.deadline));
		cd.removeAttribute("data-deadline");
		cd.dataset.left = String(left);
		cd.textContent = left > 0 ? "stopped with " + left + "s left: the question is closed" : "time is up";
	}

	function closeDialog(message) {
		if (!dialog || dialog.dataset.closed) return;
		dialog.dataset.closed = "1";
		stopCountdown();
		dialog.querySelectorAll("button, input").forEach(function (b) { b.disabled = true; });
		const result = document.getElementById("result");
		if (message) { result.textContent = message; return; }
		result.textContent = "This question was closed elsewhere; reading how it ended…";
		get(location.pathname).then(function (r) { return r.text(); }).then(function (html) {
			const doc = new DOMParser().parseFromString(html, "text/html");
			const o = doc.querySelector(".outcome");
			result.textContent = "Closed: " + (o ? o.textContent : "answered elsewhere");
		});
	}

	// The dialog.
	const armDelay = 800; // ms an allow answer waits, visible and focused, before it counts
	if (dialog) {
		const word = dialog.dataset.confirmWord;
		dialog.querySelectorAll("input.confirm").forEach(function (input) {
			input.addEventListener("input", function () {
				const b = dialog.querySelector('button[data-option="' + input.dataset.for + '"]');
				if (b) b.disabled = input.value !== word;
			});
		});
		// An allow answer is armed only after the page has been visible
		// and focused for a moment, and disarmed when it is hidden or
		// loses the focus: a click meant for another page (a popup opened
		// under the pointer, a double click) never allows a call.
		const allows = dialog.querySelectorAll("button.answer.allow");
		let armTimer = 0;
		let armed = false;
		function disarm() {
			clearTimeout(armTimer);
			armTimer = 0;
			armed = false;
			allows.forEach(function (b) { b.removeAttribute("data-armed"); });
		}
		function arm() {
			// Already armed, or arming: a focus that comes with the
			// click itself must not disarm the button it lands on.
			if (armed || armTimer || document.visibilityState !== "visible") return;
			armTimer = setTimeout(function () {
				armTimer = 0;
				armed = true;
				allows.forEach(function (b) { b.setAttribute("data-armed", "1"); });
			}, armDelay);
		}
		document.addEventListener("visibilitychange", function () {
			if (document.visibilityState === "visible") arm(); else disarm();
		});
		window.addEventListener("blur", disarm);
		window.addEventListener("focus", arm);
		arm();
		dialog.querySelectorAll("button.answer").forEach(function (b) {
			b.addEventListener("click", function () {
				if (b.classList.contains("allow") && !b.hasAttribute("data-armed")) return;
				const body = {
					sessionId: dialog.dataset.session,
					seq: Number(dialog.dataset.seq),
					toolCallId: dialog.dataset.toolcall,
					option: b.dataset.option
				};
				if (b.dataset.needsConfirm) {
					const input = dialog.querySelector('input.confirm[data-for="' + b.dataset.option + '"]');
					body.confirm = input ? input.value : "";
				}
				answeredHere = true;
				dialog.querySelectorAll("button").forEach(function (x) { x.disabled = true; });
				const result = document.getElementById("result");
				result.textContent = "Sending…";
				fetch("/api/answer", {
					method: "POST",
					credentials: "same-origin",
					headers: headers({ "Content-Type": "application/json", "X-Custom-Agent": "1" }),
					body: JSON.stringify(body)
				}).then(function (r) { return r.json(); }).then(function (res) {
					dialog.dataset.won = res.won ? "1" : "0";
					closeDialog(res.message);
				}).catch(function (e) {
					answeredHere = false;
					result.textContent = "The answer could not be sent: " + e;
				});
			});
		});
		const cd = document.getElementById("countdown");
		if (cd) {
			setInterval(function () {
				if (cd.dataset.left === "0" && !dialog.dataset.closed && !answeredHere) {
					// The asking process denies it; the queue stream closes
					// the dialog once the log says so.
					dialog.querySelectorAll("button.allow").forEach(function (b) { b.disabled = true; });
				}
			}, 500);
		}
	}

	// The policy page: policy explain for a typed call.
	const explain = document.getElementById("explain");
	if (explain) {
		document.getElementById("explain-go").addEventListener("click", function () {
			const out = document.getElementById("explain-out");
			let args;
			try { args = JSON.parse(document.getElementById("explain-args").value || "{}"); } catch (e) { out.textContent = "The arguments are not JSON: " + e.message; return; }
			out.textContent = "…";
			fetch("/api/explain", {
				method: "POST",
				credentials: "same-origin",
				headers: headers({ "Content-Type": "application/json", "X-Custom-Agent": "1" }),
				body: JSON.stringify({ cwd: explain.dataset.cwd, tool: document.getElementById("explain-tool").value, args: args })
			}).then(function (r) { return r.json(); }).then(function (res) {
				out.textContent = res.text || res.error || "";
			}).catch(function (e) { out.textContent = "failed: " + e; });
		});
	}

	function post(path, body) {
		return fetch(path, {
			method: "POST",
			credentials: "same-origin",
			headers: headers({ "Content-Type": "application/json", "X-Custom-Agent": "1" }),
			body: JSON.stringify(body)
		}).then(function (r) { return r.json().then(function (res) { res.ok = r.ok; return res; }); });
	}

	// Turns from the browser: a prompt on a new session (the sessions
	// page) or on this session (a session's page), and Cancel for a turn
	// this server runs.
	const newTurn = document.getElementById("new-turn");
	const contTurn = document.getElementById("continue-turn");
	const runningHere = document.getElementById("running-here");
	let completedSeen = 0;
	const turnGo = document.getElementById("turn-go");
	if (turnGo && (newTurn || contTurn)) {
		turnGo.addEventListener("click", function () {
			const result = document.getElementById("turn-result");
			const prompt = document.getElementById("turn-prompt");
			const body = { prompt: prompt.value };
			if (newTurn) body.cwd = document.getElementById("turn-cwd").value;
			else body.sessionId = contTurn.dataset.session;
			const before = completedSeen;
			turnGo.disabled = true;
			result.textContent = "Starting…";
			post("/api/turn", body).then(function (res) {
				turnGo.disabled = false;
				result.textContent = res.message;
				result.dataset.ok = res.ok ? "1" : "0";
				if (!res.ok) return;
				prompt.value = "";
				if (newTurn) { location.href = res.url; return; }
				contTurn.dataset.here = "1";
				if (runningHere && completedSeen === before) runningHere.hidden = false;
			}).catch(function (e) {
				turnGo.disabled = false;
				result.textContent = "The prompt could not be sent: " + e;
			});
		});
	}
	const cancelBtn = document.getElementById("turn-cancel");
	if (cancelBtn && contTurn) {
		cancelBtn.addEventListener("click", function () {
			const result = document.getElementById("turn-result");
			cancelBtn.disabled = true;
			result.textContent = "Cancelling…";
			post("/api/cancel", { sessionId: contTurn.dataset.session }).then(function (res) {
				cancelBtn.disabled = false;
				result.textContent = res.message;
				result.dataset.ok = res.ok ? "1" : "0";
				if (res.ok) runningHere.hidden = true;
			}).catch(function (e) {
				cancelBtn.disabled = false;
				result.textContent = "The cancel could not be sent: " + e;
			});
		});
	}
	// Revoke a session rule (a session no process runs now; the answer
	// says where to revoke it otherwise).
	const revokes = document.querySelectorAll("button.revoke");
	revokes.forEach(function (btn) {
		btn.addEventListener("click", function () {
			const out = document.getElementById("revoke-result");
			btn.disabled = true;
			out.textContent = "Revoking…";
			post("/api/revoke", { sessionId: btn.dataset.session, ruleId: btn.dataset.rule }).then(function (res) {
				out.textContent = res.message;
				out.dataset.ok = res.ok ? "1" : "0";
				if (res.ok) { const li = btn.closest("li"); if (li) li.remove(); } else btn.disabled = false;
			}).catch(function (e) {
				btn.disabled = false;
				out.textContent = "The revoke could not be sent: " + e;
			});
		});
	});

	// A download is fetched with the key (a plain link would carry only
	// the cookie) and saved from a blob.
	function download(e) {
		e.preventDefault();
		const a = e.currentTarget;
		get(a.getAttribute("href")).then(function (r) {
			if (!r.ok) throw new Error("status " + r.status);
			const cd = r.headers.get("Content-Disposition") || "";
			const m = /filename="?([^";]+)"?/.exec(cd);
			return r.blob().then(function (b) {
				const u = URL.createObjectURL(b);
				const t = document.createElement("a");
				t.href = u;
				t.download = m ? m[1] : "output";
				document.body.appendChild(t);
				t.click();
				t.remove();
				setTimeout(function () { URL.revokeObjectURL(u); }, 10000);
			});
		}).catch(function (err) { a.textContent += " (download failed: " + err.message + ")"; });
	}

	// Revoke one prior approval (the policy page).
	document.querySelectorAll("button.revoke-approval").forEach(function (btn) {
		btn.addEventListener("click", function () {
			const out = document.getElementById("revoke-result");
			btn.disabled = true;
			out.textContent = "Revoking…";
			post("/api/revoke-approval", { sessionId: btn.dataset.session, seq: Number(btn.dataset.seq) }).then(function (res) {
				out.textContent = res.message;
				out.dataset.ok = res.ok ? "1" : "0";
				if (res.ok) { const tr = btn.closest("tr"); if (tr) tr.remove(); } else btn.disabled = false;
			}).catch(function (e) {
				btn.disabled = false;
				out.textContent = "The revoke could not be sent: " + e;
			});
		});
	});

	// The timeline's turn events show and hide Cancel.
	// Events up to the page's head are history: the page was drawn with
	// their outcome.
	function turnEvent(type, seq) {
		if (!contTurn || !runningHere || seq <= Number(contTurn.dataset.head)) return;
		if (type === "turn.started" && contTurn.dataset.here) runningHere.hidden = false;
		if (type === "turn.completed") {
			completedSeen++;
			runningHere.hidden = true;
			delete contTurn.dataset.here;
		}
	}

	// A session's timeline: server-sent events from the log, read with
	// fetch (sse.js), which reconnects by itself and sends Last-Event-ID,
	// so nothing is lost or shown twice.
	const timeline = document.getElementById("timeline");
	if (timeline) {
		const status = document.getElementById("stream-status");
		let last = 0;
		const url = "/session/" + encodeURIComponent(timeline.dataset.session) + "/events";
		let src = null;
		// A hidden tab holds no stream (a browser opens at most six
		// connections to this server); shown again, it resumes after the
		// last event it showed.
		function open() {
			if (src) return;
			src = caStream(last ? url + "?from=" + (last + 1) : url, headers, function (type, data) {
				if (type === "ev") onEvent(data);
			}, function (state, code) {
				if (state === "error") status.textContent = "reconnecting from event " + last + "…";
				if (state === "refused") status.textContent = "the server refused the stream (" + code + "); retrying from event " + last + "…";
			});
		}
		document.addEventListener("visibilitychange", function () {
			if (document.visibilityState === "hidden") {
				if (src) { src.close(); src = null; }
				status.textContent = "paused while the tab is hidden · " + last + " events";
			} else open();
		});
		function onEvent(data) {
			const ev = JSON.parse(data);
			if (ev.seq <= last) return;
			last = ev.seq;
			const li = el("li", "event");
			li.dataset.seq = String(ev.seq);
			li.dataset.type = ev.type;
			const det = el("details");
			const sum = el("summary");
			sum.appendChild(el("span", "seq", String(ev.seq)));
			sum.appendChild(el("time", "ts", ev.ts));
			sum.appendChild(el("span", "etype", ev.type));
			sum.appendChild(el("span", "actor", ev.actor));
			if (ev.risk) {
				const r = el("span", "risk risk-" + ev.risk, ev.risk.toUpperCase());
				r.dataset.risk = ev.risk;
				sum.appendChild(r);
			}
			sum.appendChild(el("span", "summary", ev.summary));
			det.appendChild(sum);
			det.appendChild(el("pre", "json", ev.json));
			li.appendChild(det);
			if (ev.askUrl) {
				const a = el("a", "asklink", "open the question");
				a.href = ev.askUrl;
				li.appendChild(a);
			}
			(ev.artifacts || []).forEach(function (a) {
				const d = el("div", "artifact");
				const link = el("a", "", "download " + a.name + " (" + a.bytes + " bytes" + (a.note ? ", " + a.note : "") + ")");
				link.href = a.url;
				link.setAttribute("download", "");
				link.addEventListener("click", download);
				d.appendChild(link);
				li.appendChild(d);
			});
			timeline.appendChild(li);
			turnEvent(ev.type, ev.seq);
			status.textContent = "live · " + last + " events";
		}
		if (document.visibilityState !== "hidden") open();
	}
})();
