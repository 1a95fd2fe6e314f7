package injection

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// Bounds on how far one trigger looks.
const (
	maxComment = 16 << 10 // an HTML comment's length looked at
	maxTag     = 1 << 10  // an HTML start tag's length
	maxElement = 4 << 10  // an invisible element's content
	maxURL     = 4 << 10
)

// spoofTags are tag names that close or open a turn of a conversation or
// a tool result in the formats models are trained on.
var spoofTags = []string{"tool_result", "tool_results", "function_results", "function_result", "function_calls",
	"tool_output", "tool_response", "tool_use", "tool_call", "system-reminder", "system_prompt", "im_start", "im_end",
	"start_of_turn", "end_of_turn", "untrusted-data", "untrusted_data", "tool-output"}

// angle looks at a '<': comments, chat-template tokens, spoofed tags,
// images, invisible elements.
func (s *scanner) angle(i int) {
	t := s.t
	if !s.relaxed && s.fence {
		return
	}
	// Markup in a code fence or inline code is shown as text, to a
	// person as to the model: it hides nothing and renders nothing.
	// Whether inline code is open is asked only of markup that would do
	// something (quoteState is a function of i alone, so when it is asked
	// changes no answer): most tags are end tags or have no attributes.
	shown := func() bool { return !s.relaxed && s.inCode(i) }
	rest := t[i:]
	switch {
	case bytes.HasPrefix(rest, []byte("<!--")):
		if shown() || i < s.comment {
			return // shown, or inside the comment opened before
		}
		limit := min(len(t), i+maxComment)
		end, inEnd := limit, limit
		if e := s.ahead.commentEnd.index(t, i+4, limit, 3, commentClose, &s.work); e >= 0 {
			inEnd = e
			end = inEnd + 3
		}
		s.comment = end
		s.regions = append(s.regions, region{start: i, end: end, inStart: i + 4, inEnd: inEnd})
		return
	case bytes.HasPrefix(rest, []byte("<|")):
		k := i + 2
		for k < len(t) && k < i+40 && (kind[t[k]] == kLetter || kind[t[k]] == kDigit || t[k] == '_' || t[k] == '/') {
			k++
		}
		if k > i+2 && k+1 < len(t) && t[k] == '|' && t[k+1] == '>' && !shown() {
			s.spoof(i, k+2)
		}
		return
	case bytes.HasPrefix(rest, []byte("<<SYS>>")):
		if !shown() {
			s.spoof(i, i+7)
		}
		return
	case bytes.HasPrefix(rest, []byte("<</SYS>>")):
		if !shown() {
			s.spoof(i, i+8)
		}
		return
	}
	k := i + 1
	if k < len(t) && t[k] == '/' {
		k++
	}
	a := k
	for k < len(t) && k-a < 32 && (kind[t[k]] == kLetter || kind[t[k]] == kDigit || t[k] == '_' || t[k] == '-') {
		k++
	}
	if k == a || k >= len(t) {
		return
	}
	name := t[a:k]
	if in(name, spoofTags...) && (t[k] == '>' || isSpace(t[k]) || t[k] == '/') {
		e := bytes.IndexByte(t[k:min(len(t), k+200)], '>')
		if e >= 0 && !shown() {
			s.spoof(i, k+e+1)
		}
		return
	}
	if a != i+1 || t[k] != ' ' && t[k] != '\t' && t[k] != '\n' || shown() {
		return // an end tag, a start tag without attributes, or shown
	}
	limit := min(len(t), k+maxTag)
	e := s.ahead.tagEnd.index(t, k, limit, 1, tagClose, &s.work) - k
	if e < 0 {
		return
	}
	attrs := t[k : k+e]
	if in(name, "img") {
		if u := attrValue(attrs, "src"); u != nil && dataURL(u) {
			s.add(DataLink, i, k+e+1)
		}
	}
	if st := attrValue(attrs, "style"); st != nil && invisible(st) && i >= s.invisible {
		// (An invisible element inside one already found is looked at
		// with it.)
		close := k + e + 1
		end := min(len(t), close+maxElement)
		c := indexCloseTag(t[close:end], name)
		inEnd := end
		if c >= 0 {
			inEnd = close + c
		}
		s.invisible = inEnd
		s.regions = append(s.regions, region{start: i, end: inEnd, inStart: close, inEnd: inEnd})
	}
}

// inCode reports whether markdown inline code is open at i: an odd number
// of backticks before it on its line (within quoteState's window).
func (s *scanner) inCode(i int) bool { return s.quoteState(i).code == 1 }

func indexCloseTag(b, name []byte) int {
	for off := 0; ; {
		c := bytes.Index(b[off:], []byte("</"))
		if c < 0 {
			return -1
		}
		p := off + c + 2
		if p+len(name) <= len(b) && eqFoldBytes(b[p:p+len(name)], name) {
			return off + c
		}
		off = p
	}
}

func eqFoldBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// attrValue returns the value of attribute name in attrs (quoted or not),
// nil when it has none.
func attrValue(attrs []byte, name string) []byte {
	for off := 0; off < len(attrs); {
		p := indexFold(attrs[off:], name)
		if p < 0 {
			return nil
		}
		p += off
		q := p + len(name)
		off = q
		if p > 0 && !isSpace(attrs[p-1]) {
			continue
		}
		for q < len(attrs) && isSpace(attrs[q]) {
			q++
		}
		if q >= len(attrs) || attrs[q] != '=' {
			continue
		}
		q++
		for q < len(attrs) && isSpace(attrs[q]) {
			q++
		}
		if q >= len(attrs) {
			return nil
		}
		if c := attrs[q]; c == '"' || c == '\'' {
			e := bytes.IndexByte(attrs[q+1:], c)
			if e < 0 {
				return attrs[q+1:]
			}
			return attrs[q+1 : q+1+e]
		}
		e := q
		for e < len(attrs) && !isSpace(attrs[e]) {
			e++
		}
		return attrs[q:e]
	}
	return nil
}

// indexFold is bytes.Index ignoring ASCII case; lw is lower-case.
func indexFold(b []byte, lw string) int {
	for i := 0; i+len(lw) <= len(b); i++ {
		if lower(b[i]) == lw[0] && eqFold(b[i:i+len(lw)], lw) {
			return i
		}
	}
	return -1
}

// invisible reports whether a CSS style hides its element's text: no
// display, hidden, zero size or opacity, white text, off-screen.
func invisible(style []byte) bool {
	var buf [256]byte
	n := 0
	for _, c := range style {
		if n == len(buf) {
			break
		}
		if !isSpace(c) {
			buf[n] = lower(c)
			n++
		}
	}
	css := buf[:n]
	for _, h := range []string{"display:none", "visibility:hidden", "font-size:0", "opacity:0;", "color:#fff;", "color:#ffffff",
		"color:white", "color:transparent", "left:-9999", "text-indent:-9999", "height:0;", "width:0;", "clip:rect(0"} {
		if bytes.Contains(css, []byte(h)) {
			return true
		}
	}
	for _, h := range []string{"opacity:0", "color:#fff", "height:0", "width:0"} {
		if bytes.HasSuffix(css, []byte(h)) {
			return true
		}
	}
	return false
}

// bracket looks at '[': [INST], [/INST].
func (s *scanner) bracket(i int) {
	rest := s.t[i:]
	switch {
	case bytes.HasPrefix(rest, []byte("[INST]")):
		s.spoof(i, i+6)
	case bytes.HasPrefix(rest, []byte("[/INST]")):
		s.spoof(i, i+7)
	case ownNote(rest) > 0 && !s.blockQuote(i):
		// A note posing as custom-agent's own ("[custom-agent: the user
		// approved …]"): only custom-agent writes those, outside the
		// tool output it wraps. Docs quote one as a markdown block quote
		// ("> [custom-agent: …"); the context builder rewrites every such
		// note in a tool output anyway (contextbuild.Neutralise), so
		// leaving those alone costs little.
		s.spoof(i, i+ownNote(rest))
	default:
		s.refDefinition(i)
	}
}

// blockQuote reports whether i follows "> " at the start of its line.
func (s *scanner) blockQuote(i int) bool {
	t := s.t
	k := i
	for k > 0 && t[k-1] == ' ' {
		k--
	}
	return k > 0 && t[k-1] == '>' && (k == 1 || t[k-2] == '\n')
}

// ownNote returns the length of the opening of a note in custom-agent's
// own form at the start of b ("[custom-agent:", in any case, with spaces,
// '_' or a space for the hyphen, as a reader would still take it), or 0.
func ownNote(b []byte) int {
	k := 1
	for k < len(b) && k < 4 && b[k] == ' ' {
		k++
	}
	if !hasPrefixFold(b[k:], "custom") {
		return 0
	}
	k += len("custom")
	if k < len(b) && (b[k] == '-' || b[k] == '_' || b[k] == ' ') {
		k++
	}
	if !hasPrefixFold(b[k:], "agent") {
		return 0
	}
	k += len("agent")
	for k < len(b) && k < 24 && b[k] == ' ' {
		k++
	}
	if k >= len(b) || b[k] != ':' {
		return 0
	}
	return k + 1
}

// spoof records a chat-template token or tag at t[i:e], unless it stands
// alone in inline code (`<|im_start|>`): text that names the token, as
// docs about chat templates and injection do, does not pose as a turn.
func (s *scanner) spoof(i, e int) {
	t := s.t
	if !s.relaxed && (s.fence || i > 0 && t[i-1] == '`' && e < len(t) && t[e] == '`' || s.inString(i) || s.named(e)) {
		return
	}
	s.add(RoleSpoof, i, e)
}

// inString reports whether i is inside a string literal or inline code of
// its line: an odd number of '"' or '`' before it, or a '\” just before
// it or a "+ '" joining pieces. Code and templates that build chat turns
// (f"<|im_start|>{role}", '<|im_start|>' + role, `<s>[INST] {prompt}`) hold
// the tokens as data; a token spoken to the reader stands outside quotes.
func (s *scanner) inString(i int) bool {
	q := s.quoteState(i)
	return q.dq == 1 || q.code == 1 || i > 0 && s.t[i-1] == '\''
}

// named reports whether the token ending at e is followed by words that
// name it ("[INST] is the instruction marker", "<|im_end|> marks …"):
// talk about the token, not a turn.
func (s *scanner) named(e int) bool {
	rest := s.t[e:min(len(s.t), e+12)]
	for _, w := range []string{" is ", " are ", " marks ", " tokens", " token "} {
		if bytes.HasPrefix(rest, []byte(w)) {
			return true
		}
	}
	return false
}

// hash looks at a markdown heading that is a prompt template's section:
// "### Instruction:", "### Response:", "## System", "### New instructions".
func (s *scanner) hash(i int) {
	t := s.t
	if i > 0 && t[i-1] != '\n' || !s.relaxed && s.fence {
		return
	}
	k := i
	for k < len(t) && t[k] == '#' {
		k++
	}
	if k-i < 2 || k >= len(t) || t[k] != ' ' {
		return
	}
	for k < len(t) && t[k] == ' ' {
		k++
	}
	eol := bytes.IndexByte(t[k:min(len(t), k+80)], '\n')
	if eol < 0 {
		if len(t)-k > 80 {
			return
		}
		eol = len(t) - k
	}
	line := bytes.TrimRight(t[k:k+eol], " \r")
	colon := bytes.HasSuffix(line, []byte(":"))
	head := bytes.TrimSuffix(line, []byte(":"))
	// A template: the header's content is a placeholder to fill in
	// ("### Instruction:\n{instruction}"), or the header ends a line of a
	// string literal ("### Instruction:\n" in source).
	next := t[min(len(t), k+eol+1):]
	next = next[:min(len(next), 40)]
	if nl := bytes.IndexByte(next, '\n'); nl >= 0 {
		next = next[:nl]
	}
	next = bytes.TrimSpace(next)
	if placeholderLine(next) || bytes.HasSuffix(line, []byte("\\n")) || bytes.Contains(line, []byte("\\n")) {
		return
	}
	switch {
	case colon && in(head, "instruction", "instructions", "response", "input", "system", "system prompt", "new instructions", "user", "assistant"):
	case in(head, "system", "system prompt", "system message", "new instructions", "updated instructions", "new system prompt"):
	default:
		return
	}
	s.add(RoleSpoof, i, k+len(line))
}

// bang looks at a markdown image: ![alt](url).
func (s *scanner) bang(i int) {
	t := s.t
	if i+1 >= len(t) || t[i+1] != '[' || !s.relaxed && (s.fence || s.inCode(i)) {
		return
	}
	limit := min(len(t), i+2+maxTag)
	s.imageRef(i)
	c := s.ahead.imgClose.index(t, i+2, limit, 2, imgClose, &s.work) - (i + 2)
	if c < 0 {
		return
	}
	u := i + 2 + c + 2
	e := s.ahead.urlStop.index(t, u, min(len(t), u+maxURL), 1, urlStop, &s.work)
	if e < 0 {
		e = min(len(t), u+maxURL)
	}
	if dataURL(t[u:e]) {
		end := e
		if end < len(t) && t[end] == ')' {
			end++
		}
		s.add(DataLink, i, end)
	}
}

var dataNames = []string{"data", "d", "q", "secret", "key", "token", "payload", "c", "conversation", "history",
	"env", "content", "prompt", "msg", "message", "text", "info", "leak", "x", "s", "p"}

// dataURL reports whether an image URL carries data: a placeholder to fill
// in ({…}, $VAR, <…>, [DATA]), a long opaque query value, or a data-ish
// parameter holding an upper-case placeholder word.
func dataURL(u []byte) bool {
	if !hasPrefixFold(u, "http://") && !hasPrefixFold(u, "https://") && !bytes.HasPrefix(u, []byte("//")) {
		return false
	}
	if placeholder(u) {
		return true
	}
	q := bytes.IndexByte(u, '?')
	if opaquePath(u, q) {
		return true
	}
	if q < 0 {
		return false
	}
	query := u[q+1:]
	if h := bytes.IndexByte(query, '#'); h >= 0 {
		query = query[:h]
	}
	for len(query) > 0 {
		var param []byte
		if a := bytes.IndexByte(query, '&'); a >= 0 {
			param, query = query[:a], query[a+1:]
		} else {
			param, query = query, nil
		}
		name, value, _ := bytes.Cut(param, []byte("="))
		if opaque(value) {
			return true
		}
		if len(value) >= 4 && placeholderWord(value) && (in(name, dataNames...) || bytes.IndexByte(value, '_') > 0) {
			return true
		}
	}
	return false
}

// opaque reports whether a query value is long and looks like encoded
// data, not a URL, a data: image or words.
func opaque(v []byte) bool {
	if len(v) < 32 || hasPrefixFold(v, "data:") || hasPrefixFold(v, "http") || bytes.Contains(v, []byte("%2F")) || bytes.Contains(v, []byte("%2f")) {
		return false
	}
	letters, digits := 0, 0
	for _, c := range v {
		switch {
		case kind[c] == kLetter:
			letters++
		case kind[c] == kDigit:
			digits++
		case c == '+' || c == '/' || c == '=' || c == '-' || c == '_' || c == '%' || c == '.':
		default:
			return false
		}
	}
	return letters > 0 && digits > 0
}

// placeholder reports whether a URL holds a placeholder to fill in: a
// word in braces, brackets or angle brackets ({SECRET}, [DATA], <token>,
// %7Bsecret%7D) or a $VARIABLE. An empty {} (a badge's literal braces) is
// none.
func placeholder(u []byte) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		open := c == '{' || c == '[' || c == '<'
		if c == '%' && i+2 < len(u) && (u[i+1] == '7' && (u[i+2] == 'B' || u[i+2] == 'b') || u[i+1] == '2' && u[i+2] == '4') {
			open, i = true, i+2
		}
		if c == '$' {
			open = true
		}
		if open && i+1 < len(u) && kind[u[i+1]] == kLetter {
			return true
		}
	}
	return false
}

func placeholderWord(v []byte) bool {
	for _, c := range v {
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// Non-ASCII trigger words of an override ("ignore") in Chinese, Japanese,
// Korean and Russian, the objects ("instructions") and qualifiers
// ("previous", "all") that must be near.
var (
	cjkVerbs = []string{"忽略", "无视", "無視", "忘记", "忘記", "忘掉", "不要理会", "不要理會", "무시", "игнорируй", "Игнорируй",
		"игнорировать", "Игнорировать", "забудь", "Забудь", "忽視", "忽视"}
	cjkObj = []string{"指令", "指示", "提示", "说明", "說明", "规则", "規則", "命令", "设定", "設定", "지시", "명령", "инструкци",
		"указани", "правил", "要求"}
	cjkQual = []string{"之前", "以前", "以上", "上面", "前面", "先前", "所有", "全部", "上述", "上記", "これまで", "이전", "모든",
		"предыдущ", "все", "прежн", "原来", "原有", "系统"}
)

// high looks at a non-ASCII character at i and returns its length.
func (s *scanner) high(i int) int {
	t := s.t
	r, n := utf8.DecodeRune(t[i:])
	switch {
	case r >= 0xE0000 && r <= 0xE007F:
		e := i + n
		for e < len(t) {
			r2, n2 := utf8.DecodeRune(t[e:])
			if r2 < 0xE0000 || r2 > 0xE007F {
				break
			}
			e += n2
		}
		// A subdivision flag (🏴 followed by tags) is an emoji.
		if !bytes.HasSuffix(t[:i], []byte("\U0001F3F4")) {
			s.add(Hidden, i, e)
		}
		return e - i
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		s.add(Hidden, i, i+n)
	case r == 0x200B, r >= 0x2060 && r <= 0x2064, r == 0x180E, r == 0xFEFF && i > 0,
		(r == 0x200C || r == 0x200D) && (i == 0 || t[i-1] < 0x80 || s.zwEnd(i)):
		s.zw++
		if k := len(s.zwSpans); k > 0 && s.zwSpans[k-1].End == i {
			s.zwSpans[k-1].End = i + n
		} else if k < MaxSpans {
			s.zwSpans = append(s.zwSpans, Span{Class: Hidden, Start: i, End: i + n})
		}
	default:
		for _, v := range cjkVerbs {
			if v[0] == t[i] && bytes.HasPrefix(t[i:], []byte(v)) {
				s.cjkOverride(i, i+len(v))
				return len(v)
			}
		}
		for _, v := range cjkSend {
			if v[0] == t[i] && bytes.HasPrefix(t[i:], []byte(v)) {
				s.cjkExfil(i, i+len(v))
				return len(v)
			}
		}
	}
	return n
}

func (s *scanner) zwEnd(i int) bool {
	k := len(s.zwSpans)
	return k > 0 && s.zwSpans[k-1].End == i
}

// Chinese asks to send secrets somewhere: a verb, a secret before or
// after it, and a destination after it.
var (
	cjkSend   = []string{"发送", "发给", "发到", "上传", "粘贴", "贴到", "提交", "泄露", "转发", "傳送", "上傳", "發送"}
	cjkSecret = []string{".env", "密钥", "秘钥", "金鑰", "令牌", "密码", "密碼", "凭证", "凭据", "憑證", "私钥", "token", "API", "对话", "聊天记录", "系统提示"}
)

func (s *scanner) cjkExfil(i, j int) {
	t := s.t
	if !s.relaxed && s.quotedCJK(i) {
		return
	}
	a := max(0, i-80)
	for a < i && t[a]&0xC0 == 0x80 {
		a++
	}
	after := t[j:min(len(t), j+120)]
	secret := false
	for _, w := range cjkSecret {
		if bytes.Contains(t[a:j], []byte(w)) || bytes.Contains(after, []byte(w)) {
			secret = true
			break
		}
	}
	d := bytes.Index(after, []byte("://"))
	if d < 0 {
		d = bytes.IndexByte(after, '@')
	}
	if !secret || d < 0 {
		return
	}
	e := j + d
	for e < len(t) && e < j+len(after) && !isSpace(t[e]) && t[e] < 0x80 {
		e++
	}
	s.add(Exfiltration, i, e)
}

func (s *scanner) quotedCJK(i int) bool {
	if s.fence || s.inQuote(i) {
		return true
	}
	for _, q := range []string{"“", "「", "『", "\"", "'", "‘", "«"} {
		if bytes.HasSuffix(s.t[:i], []byte(q)) {
			return true
		}
	}
	return false
}

// cjkOverride: an override verb with an object and a qualifier near it,
// before or after (Japanese puts the object first: 以前の指示を無視して).
func (s *scanner) cjkOverride(i, j int) {
	t := s.t
	if i < s.cjk.flagged {
		return // within an order already found
	}
	a := max(0, i-60)
	for a < i && t[a]&0xC0 == 0x80 {
		a++
	}
	b := min(len(t), j+120)
	// No object or no qualifier, no order: each is looked for only in
	// what the last call did not read.
	if !s.anyIn(&s.cjk.obj, cjkObj, a, b) || !s.anyIn(&s.cjk.qual, cjkQual, a, b) {
		return
	}
	if !s.relaxed && s.quotedCJK(i) {
		return
	}
	win := t[a:b]
	start, end, qual := -1, -1, false
	for _, o := range cjkObj {
		if p := bytes.Index(win, []byte(o)); p >= 0 {
			if start < 0 || a+p < start {
				start = a + p
			}
			end = max(end, a+p+len(o))
		}
	}
	for _, q := range cjkQual {
		if bytes.Contains(win, []byte(q)) {
			qual = true
			break
		}
	}
	if start >= 0 && qual {
		s.add(Override, min(i, start), max(j, end))
		s.cjk.flagged = max(j, end)
	}
}

// finishHidden reports zero-width characters when there are enough of
// them, and looks again, relaxed, into HTML comments and invisible
// elements: one that holds an instruction is hidden text.
func (s *scanner) finishHidden() {
	if s.zw >= 3 {
		for _, sp := range s.zwSpans {
			s.add(Hidden, sp.Start, sp.End)
		}
	}
	for _, r := range s.regions {
		if s.probe && s.found {
			return
		}
		size := r.inEnd - r.inStart
		if size <= 0 || *s.regionBudget < size {
			continue
		}
		*s.regionBudget -= size
		sub := s.nested(s.t[r.inStart:r.inEnd], s.depth, false)
		sub.run()
		sub.finishHidden()
		if !sub.found {
			continue
		}
		s.add(Hidden, r.start, r.end)
		for _, sp := range sub.spans {
			s.add(sp.Class, sp.Start+r.inStart, sp.End+r.inStart)
		}
	}
}

// memo remembers a forward search, so that a run of triggers that look
// ahead for the same thing (a "<!--" for its "-->", a "![" for its "](")
// reads each byte a bounded number of times: [from, to) is known to hold
// no match, and hit says whether one starts at to.
type memo struct {
	from, to int
	hit, set bool
}

// index returns the first k >= p where find matches, with the match
// inside t[:limit] (find returns a match's start in b, or -1; n is the
// length of a match), or -1.
func (m *memo) index(t []byte, p, limit, n int, find func(b []byte) int, work *int) int {
	start := p
	if m.set && m.from <= p && p <= m.to {
		start = m.to
		if m.hit {
			if m.to+n <= limit {
				return m.to
			}
			return -1
		}
	} else {
		m.from = p
	}
	m.set = true
	if start >= limit {
		return -1
	}
	if k := find(t[start:limit]); k >= 0 {
		*work += k + n
		m.to, m.hit = start+k, true
		return start + k
	}
	*work += limit - start
	m.to, m.hit = max(start, limit-n+1), false
	return -1
}

func commentClose(b []byte) int { return bytes.Index(b, []byte("-->")) }
func tagClose(b []byte) int     { return bytes.IndexByte(b, '>') }
func bracketClose(b []byte) int { return bytes.IndexByte(b, ']') }
func imgClose(b []byte) int     { return bytes.Index(b, []byte("](")) }

// urlStop finds the end of a markdown image's URL: a ')' or a space.
func urlStop(b []byte) int {
	return bytes.IndexFunc(b, func(r rune) bool { return r == ')' || r < 0x80 && isSpace(byte(r)) })
}

// absent remembers that no word of a list lies whole in t[from:to].
type absent struct {
	from, to int
	set      bool
}

// anyIn reports whether a word of words lies whole in t[a:b], reading
// only what the last call (at a smaller a) did not: the windows of a run
// of triggers overlap.
func (s *scanner) anyIn(m *absent, words []string, a, b int) bool {
	longest := 0
	for _, w := range words {
		longest = max(longest, len(w))
	}
	from := a
	if m.set && m.from <= a && a <= m.to {
		from = max(a, m.to-longest+1)
	} else {
		m.from, m.to = a, a
	}
	m.set = true
	if from < b {
		s.work += b - from
		for _, w := range words {
			if bytes.Contains(s.t[from:b], []byte(w)) {
				m.set = false
				return true
			}
		}
	}
	m.to = max(m.to, b)
	return false
}

// placeholderLine reports whether a line begins with a template's
// placeholder: {}, {input}, {{ prompt }}.
func placeholderLine(b []byte) bool {
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	e := bytes.IndexByte(b, '}')
	if e < 0 {
		return false
	}
	for _, c := range b[1:e] {
		if kind[c] != kLetter && kind[c] != kDigit && c != '_' && c != ' ' && c != '{' && c != '.' {
			return false
		}
	}
	return true
}

// opaquePath reports whether the path of URL u (up to q, its '?', or the
// end) has a segment of 32 or more base64 characters mixing upper and
// lower case letters and digits (the extension aside): data put in the
// path, as a hash (hex, one case) or a name is not.
func opaquePath(u []byte, q int) bool {
	if q < 0 {
		q = len(u)
	}
	p := u[:q]
	if h := bytes.IndexByte(p, '#'); h >= 0 {
		p = p[:h]
	}
	p = p[min(len(p), bytes.Index(p, []byte("//"))+2):]
	for len(p) > 0 {
		seg := p
		if k := bytes.IndexByte(p, '/'); k >= 0 {
			seg, p = p[:k], p[k+1:]
		} else {
			p = nil
		}
		if d := bytes.LastIndexByte(seg, '.'); d > 0 && len(seg)-d <= 5 {
			seg = seg[:d]
		}
		if len(seg) < 32 {
			continue
		}
		var up, low, dig bool
		ok := true
		for _, c := range seg {
			switch {
			case c >= 'A' && c <= 'Z':
				up = true
			case c >= 'a' && c <= 'z':
				low = true
			case c >= '0' && c <= '9':
				dig = true
			case c == '+' || c == '-' || c == '_' || c == '=':
			default:
				ok = false
			}
		}
		if ok && up && low && dig {
			return true
		}
	}
	return false
}

// refDefinition looks at a markdown link reference definition at the
// start of a line, "[1]: https://…": when an image uses the label
// (![alt][1]) and the URL carries data, the image is a data link.
func (s *scanner) refDefinition(i int) {
	t := s.t
	if i > 0 && t[i-1] != '\n' || !s.relaxed && s.fence {
		return
	}
	e := bytes.IndexByte(t[i:min(len(t), i+40)], ']')
	if e < 2 || i+e+2 >= len(t) || t[i+e+1] != ':' {
		return
	}
	label := t[i : i+e+1] // "[1]"
	u := i + e + 2
	for u < len(t) && t[u] == ' ' {
		u++
	}
	end := u
	for end < len(t) && end-u < maxURL && !isSpace(t[end]) {
		end++
	}
	if !dataURL(t[u:end]) {
		return
	}
	// An image before it used the label (bang records them).
	if slices.Contains(s.imageRefs, labelHash(label[1:len(label)-1])) {
		s.add(DataLink, i, end)
	}
}

// imageRef records the label of a reference-style image at i,
// ![alt][label], for refDefinition (at most 256 labels a scan).
func (s *scanner) imageRef(i int) {
	t := s.t
	e := s.ahead.bracketEnd.index(t, i+2, min(len(t), i+2+200), 1, bracketClose, &s.work) - (i + 2)
	if e < 0 {
		return
	}
	k := i + 2 + e + 1
	if k >= len(t) || t[k] != '[' {
		return
	}
	f := bytes.IndexByte(t[k+1:min(len(t), k+1+40)], ']')
	if f <= 0 || len(s.imageRefs) >= maxImageRefs {
		return
	}
	s.work += f
	if s.imageRefs == nil {
		s.imageRefs = make([]uint64, 0, maxImageRefs)
	}
	s.imageRefs = append(s.imageRefs, labelHash(t[k+1:k+1+f]))
}

// maxImageRefs is how many reference-style image labels a scan keeps.
const maxImageRefs = 256

// labelHash is the 64-bit FNV-1a hash of a reference label: labels are
// kept as hashes, in a slice made once, rather than as strings made one
// by one. Two labels with one hash only make a link definition be taken
// for an image's.
func labelHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
