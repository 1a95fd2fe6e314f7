// custom-agent serve: one queue stream for every tab of the UI. A browser
// opens at most 6 connections to one host over HTTP/1.1; a stream per tab
// used them all up with a few tabs open, and the next page or answer
// waited forever. This shared worker holds the one /queue/events stream and
// passes each queue (JSON text, never markup) to every tab connected. The
// tabs give it their key (it is of this origin only), which it sends as a
// header on the stream.
"use strict";

importScripts("/assets/sse.js");

const ports = new Set();
let last = null;
let src = null;
let key = "";

function start() {
	if (src || !key) return;
	src = caStream("/queue/events", function () { return { "X-Custom-Agent-Key": key }; }, function (type, data) {
		if (type !== "queue") return;
		last = data;
		ports.forEach(function (p) { p.postMessage(data); });
	}, function () {});
}

self.onconnect = function (e) {
	const port = e.ports[0];
	ports.add(port);
	port.onmessage = function (m) {
		if (m.data === "bye") ports.delete(port);
		else if (m.data && typeof m.data.key === "string") {
			key = m.data.key;
			start();
		}
	};
	port.start();
	if (last !== null) port.postMessage(last);
};
