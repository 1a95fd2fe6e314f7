package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
)

// lineWriter writes whole messages under one lock, so the SDK's messages
// and the filter's error responses never interleave on stdout.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// maxLine is the longest message accepted (the SDK's own limit).
const maxLine = 10 << 20

// filterInput forwards the well-formed JSON-RPC messages of in to the
// returned reader, one a line, and answers a malformed one itself with a
// JSON-RPC error on w: -32700 for a line that is not JSON, -32600 for JSON
// that is not a JSON-RPC 2.0 message. The SDK would drop such a line
// silently, leaving the client waiting.
func filterInput(in io.Reader, w io.Writer, log *slog.Logger, ready <-chan struct{}) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		<-ready
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 64<<10), maxLine)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if resp := check(line); resp != nil {
				log.Warn("malformed JSON-RPC message refused", "error", resp.Error.Message)
				b, _ := json.Marshal(resp)
				if _, err := w.Write(append(b, '\n')); err != nil {
					break
				}
				continue
			}
			if _, err := pw.Write(append(append([]byte(nil), line...), '\n')); err != nil {
				break
			}
		}
		if err := sc.Err(); err != nil {
			log.Error("reading stdin", "err", err)
		}
		pw.Close()
	}()
	return pr
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

var null = json.RawMessage("null")

// check returns the error response for a malformed message, or nil.
func check(line []byte) *errorResponse {
	if !json.Valid(line) {
		return &errorResponse{"2.0", null, rpcError{-32700, "Parse error: the line is not JSON"}}
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return &errorResponse{"2.0", null, rpcError{-32600, "Invalid Request: a message must be a JSON object (batches are not supported)"}}
	}
	id, hasID := msg["id"]
	if hasID && !validID(id) {
		return &errorResponse{"2.0", null, rpcError{-32600, "Invalid Request: id must be a string, a number or null"}}
	}
	if !hasID {
		id = null
	}
	if v, ok := msg["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return &errorResponse{"2.0", id, rpcError{-32600, `Invalid Request: "jsonrpc" must be "2.0"`}}
	}
	m, hasMethod := msg["method"]
	if hasMethod {
		var s string
		if json.Unmarshal(m, &s) != nil || s == "" {
			return &errorResponse{"2.0", id, rpcError{-32600, "Invalid Request: method must be a non-empty string"}}
		}
		if p, ok := msg["params"]; ok && len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return &errorResponse{"2.0", id, rpcError{-32600, "Invalid Request: params must be an object or an array"}}
		}
		return nil
	}
	_, hasResult := msg["result"]
	_, hasError := msg["error"]
	if hasID && (hasResult || hasError) {
		return nil // a response
	}
	return &errorResponse{"2.0", id, rpcError{-32600, "Invalid Request: neither a request, a notification nor a response"}}
}

func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"', 'n':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}
