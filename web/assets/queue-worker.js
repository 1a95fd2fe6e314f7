// custom-agent serve: one queue stream for every tab of the UI. A browser
// opens at most 6 connections to one host over HTTP/1.1; a stream per tab
// used them all up with a few tabs open, and the next page or answer
// waited forever. This shared worker holds the one /queue/events stream and
// passes each queue (JSON text, never markup) to every tab connected.
"use strict";

const ports = new Set();
let last = null;
let src = null;

function start() {
	if (src) return;
	src = new EventSource("/queue/events");
	src.addEventListener("queue", function (m) {
		last = m.data;
		ports.forEach(function (p) { p.postMessage(m.data); });
	});
}

self.onconnect = function (e) {
	const port = e.ports[0];
	ports.add(port);
	port.onmessage = function (m) {
		if (m.data === "bye") ports.delete(port);
	};
	port.start();
	start();
	if (last !== null) port.postMessage(last);
};
