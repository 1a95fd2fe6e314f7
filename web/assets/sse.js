// custom-agent serve: server-sent events read with fetch, so that the
// request carries this tab's key (EventSource sends no header). It
// reconnects by itself with Last-Event-ID, as EventSource does. Used by the
// pages and, through importScripts, by the queue's shared worker.
"use strict";

// caStream reads url; headers() gives the headers of each connection;
// onEvent(type, data, id) gets each event; onState(state, status) hears
// "open", "error" (it will retry) and "refused" (an HTTP error; it retries
// too, more slowly). It returns an object whose close() stops it.
function caStream(url, headers, onEvent, onState) {
	let closed = false;
	let ctl = null;
	let lastId = "";
	let timer = null;
	function retry(ms) {
		if (!closed) timer = setTimeout(connect, ms);
	}
	function dispatch(block) {
		let type = "message";
		const data = [];
		let id = null;
		block.split("\n").forEach(function (line) {
			if (line === "" || line[0] === ":") return;
			const i = line.indexOf(":");
			const field = i < 0 ? line : line.slice(0, i);
			let value = i < 0 ? "" : line.slice(i + 1);
			if (value[0] === " ") value = value.slice(1);
			if (field === "event") type = value;
			else if (field === "data") data.push(value);
			else if (field === "id") id = value;
		});
		if (id !== null) lastId = id;
		if (data.length) onEvent(type, data.join("\n"), lastId);
	}
	function connect() {
		if (closed) return;
		ctl = new AbortController();
		const h = Object.assign({ Accept: "text/event-stream" }, headers());
		if (lastId) h["Last-Event-ID"] = lastId;
		fetch(url, { credentials: "same-origin", cache: "no-store", headers: h, signal: ctl.signal }).then(function (r) {
			if (!r.ok) {
				onState("refused", r.status);
				retry(5000);
				return;
			}
			onState("open", r.status);
			const reader = r.body.getReader();
			const dec = new TextDecoder();
			let buf = "";
			function pump() {
				return reader.read().then(function (x) {
					if (x.done) throw new Error("the stream ended");
					buf += dec.decode(x.value, { stream: true }).replace(/\r\n?/g, "\n");
					let i;
					while ((i = buf.indexOf("\n\n")) >= 0) {
						const block = buf.slice(0, i);
						buf = buf.slice(i + 2);
						dispatch(block);
					}
					return pump();
				});
			}
			return pump();
		}).catch(function () {
			if (closed) return;
			onState("error", 0);
			retry(1000);
		});
	}
	connect();
	return {
		close: function () {
			closed = true;
			if (timer) clearTimeout(timer);
			if (ctl) ctl.abort();
		}
	};
}
