package web

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"
)

// sniffLen is how much of a body is looked at to tell text from binary.
const sniffLen = 512

// isText reports whether a body of content type ct, starting with head,
// is text to show the model rather than bytes to summarise. A declared
// type decides; without one (or with a generic one) the bytes do.
func isText(ct string, head []byte) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = ""
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), strings.HasSuffix(mt, "+yaml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-www-form-urlencoded", "application/yaml", "application/x-yaml", "application/toml",
		"application/graphql", "application/x-ndjson", "application/x-sh", "image/svg+xml":
		return true
	case "", "application/octet-stream", "binary/octet-stream":
		return looksLikeText(head)
	}
	return false
}

// looksLikeText: valid UTF-8 and no NUL byte. A rune cut by the end of
// head is allowed.
func looksLikeText(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	for i := 1; i < utf8.UTFMax && i <= len(head); i++ {
		if tail := head[len(head)-i:]; utf8.RuneStart(tail[0]) {
			if !utf8.FullRune(tail) {
				head = head[:len(head)-i]
			}
			break
		}
	}
	return utf8.Valid(head)
}
