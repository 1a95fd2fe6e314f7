package injection

import "bytes"

// handler is what a trigger word starts.
type handler uint8

const (
	hNone handler = iota
	hOverride
	hSystem
	hCue
	hExfil
	hReveal
	hNegate  // do / don / never: "do not tell the user"
	hWithout // "without telling the user"
	hToolVerb
	hNew
	hTurn // "Human:" / "User:" opening a turn after a blank line
	hAuth // "the user has authorised you to …"
	hNet  // curl, wget: a credential file piped or attached to them
)

type trigger struct {
	word string
	h    handler
}

// triggers are indexed by the word's first letter. Words are ASCII; the
// main loop looks them up only for runs of 2 to 63 letters.
var triggers [26][]trigger

// lenMask[f&31][l&31] has bit n set when a trigger of length n starts
// with letter f and ends with letter l (either case: the low five bits of
// an ASCII letter are its place in the alphabet): most words are passed
// over on one test. Words of 64 letters or more match no bit.
var lenMask [32][32]uint64

func init() {
	add := func(h handler, words ...string) {
		for _, w := range words {
			triggers[w[0]-'a'] = append(triggers[w[0]-'a'], trigger{w, h})
			lenMask[w[0]&31][w[len(w)-1]&31] |= 1 << len(w)
			for k := 0; k+1 < len(w); k++ {
				triggerPair[w[k]&31][w[k+1]&31] = true
			}
		}
	}
	add(hOverride, "ignore", "ignora", "ignorez", "ignoriere", "ignorieren", "disregard", "forget", "vergiss",
		"oubliez", "oublie", "olvida", "olvide", "override", "bypass", "discard", "abandon", "pay")
	add(hSystem, "system")
	add(hCue, "assistant", "assistants", "agent", "agents", "ai", "llm", "llms", "chatbot", "chatbots",
		"claude", "chatgpt", "copilot", "gemini", "gpt")
	add(hExfil, "send", "post", "paste", "upload", "email", "mail", "forward", "transmit", "submit", "share",
		"leak", "exfiltrate", "copy", "put", "append", "include", "embed", "attach")
	add(hReveal, "reveal", "print", "repeat", "output", "show", "display", "disclose", "dump", "tell")
	add(hNegate, "do", "don", "never")
	add(hWithout, "without")
	add(hToolVerb, "call", "invoke", "use", "run", "execute", "trigger")
	add(hNew, "new", "updated", "revised")
	add(hTurn, "human", "user")
	add(hAuth, "authorised", "authorized")
	add(hNet, "curl", "wget")
}

func (s *scanner) word(i, j int) {
	t := s.t
	// Part of a name, not a word: post-quantum, leak.js, attach-user,
	// foo_send, /usr/bin/run.
	if j+1 < len(t) && (t[j] == '-' || t[j] == '.' || t[j] == '_' || t[j] == '/') && kind[t[j+1]] != kOther && kind[t[j+1]] <= kDigit ||
		i > 0 && (t[i-1] == '-' || t[i-1] == '_' || t[i-1] == '/' || t[i-1] == '.' && i > 1 && kind[t[i-2]] == kLetter) {
		return
	}
	w := t[i:j]
	c := lower(w[0])
	for _, tr := range triggers[c-'a'] {
		if len(tr.word) != len(w) || !eqFold(w, tr.word) {
			continue
		}
		switch tr.h {
		case hOverride:
			s.override(i, j)
		case hSystem:
			s.system(i, j)
		case hCue:
			s.cue(i, j)
		case hExfil:
			s.exfil(i, j)
		case hReveal:
			s.reveal(i, j)
		case hNegate:
			s.negate(i, j)
		case hWithout:
			s.without(i, j)
		case hToolVerb:
			s.toolVerb(i, j)
		case hNew:
			s.newInstructions(i, j)
		case hTurn:
			s.turn(i, j)
		case hAuth:
			s.authorised(i, j)
		case hNet:
			s.netCredential(i, j)
		}
		return
	}
}

// A window is the tokens after a trigger, up to the end of its sentence.
type window struct {
	n   int
	tok [40][2]int
}

func (w *window) at(t []byte, k int) []byte { return t[w.tok[k][0]:w.tok[k][1]] }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// newItem reports whether the line that starts at i (after its
// indentation) is a new markdown block: a list item, heading, table row,
// quotation or a changelog's "* [".
func newItem(t []byte, i int) bool {
	switch t[i] {
	case '-', '*', '+', '#', '|', '>':
		return true
	}
	k := i
	for k < len(t) && k-i < 4 && kind[t[k]] == kDigit {
		k++
	}
	return k > i && k < len(t) && (t[k] == '.' || t[k] == ')')
}

// tokenBreak are bytes that end a token besides white space.
var tokenBreak = [256]bool{',': true, ';': true, '"': true, '\'': true, '`': true, '(': true, ')': true,
	'<': true, '>': true, '[': true, ']': true, '{': true, '}': true, '*': true, '|': true}

// window collects up to max tokens from i, within maxBytes, stopping after
// the token that ends a sentence (a trailing . ! ?) when sentences is 1,
// after that many sentences otherwise, and at a blank line always. A '|'
// is a token of its own, so that pipes into a shell can be seen.
func (s *scanner) window(i, maxTok, maxBytes, sentences int) window {
	var w window
	t := s.t
	end := min(len(t), i+maxBytes)
	for i < end && w.n < maxTok && w.n < len(w.tok) {
		nl := 0
		for i < end && (isSpace(t[i]) || tokenBreak[t[i]] && t[i] != '|') {
			if t[i] == '\n' {
				nl++
				k := i + 1
				for k < end && (t[k] == ' ' || t[k] == '\t') {
					k++
				}
				if k < end && newItem(t, k) {
					return w // the next line is another list item, heading or row
				}
			}
			i++
		}
		if nl >= 2 || i >= end {
			return w
		}
		a := i
		if t[i] == '|' {
			i++
		} else {
			for i < end && !isSpace(t[i]) && !tokenBreak[t[i]] {
				i++
			}
		}
		b := i
		stop := false
		for b > a+1 && (t[b-1] == '.' || t[b-1] == ':' || t[b-1] == '!' || t[b-1] == '?') {
			if t[b-1] != ':' {
				stop = true
			}
			b--
		}
		w.tok[w.n] = [2]int{a, b}
		w.n++
		if stop {
			sentences--
			if sentences <= 0 {
				return w
			}
		}
	}
	return w
}

// in reports whether tok is one of words (lower-case), ignoring ASCII
// case.
func in(tok []byte, words ...string) bool {
	for _, w := range words {
		if len(w) == len(tok) && eqFold(tok, w) {
			return true
		}
	}
	return false
}

var quoteBefore = [256]bool{'"': true, '\'': true, '`': true}

// quoted reports whether the word at i is quoted or shown rather than
// said: in a markdown code fence, right after an opening quote or
// backtick (ASCII, or “ ‘ « 「 『), or inside a quotation that opened
// earlier on its line and has not closed ("… such as “Ignore all
// previous instructions. Tell …”").
func (s *scanner) quoted(i int) bool {
	if s.fence {
		return true
	}
	if i == 0 {
		return false
	}
	t := s.t
	if quoteBefore[t[i-1]] {
		return true
	}
	for _, q := range []string{"“", "‘", "«", "「", "『", "„"} {
		if bytes.HasSuffix(t[:i], []byte(q)) {
			return true
		}
	}
	return s.inQuote(i)
}

// shown reports whether the text at i is shown rather than said (quoted,
// in a code fence), outside hidden text and decoded payloads.
func (s *scanner) shown(i int) bool { return !s.relaxed && s.quoted(i) }

// inQuote reports whether a quotation is open at i on its line: an ASCII
// " or ' that opens (after a space or bracket, before a non-space) and has
// not closed, “ ‘ « without their closers, or markdown inline code (an odd
// number of backticks before i). Apostrophes inside words (it's) neither
// open nor close.
func (s *scanner) inQuote(i int) bool {
	q := s.quoteState(i)
	return q.dq == 1 || q.sq == 1 || q.curly > 0 || q.code == 1
}

// quoteWindow is how far back on a line the quotation state is read: at
// least 400 bytes, at most 400 + quoteStep, the start moving in steps of
// quoteStep so that a run of calls on one long line reads each byte a
// bounded number of times.
const (
	quoteWindow = 400
	quoteStep   = 256
)

// exactParity returns whether an odd number of '"' and of '`' stand in
// the 400 bytes before i on its line: counts are added at the front and
// taken off at the back as i grows, so the window is exact and the work
// linear (quoteSteps must have run for i: it knows the line's start).
func (s *scanner) exactParity(i int) (dq, code int) {
	t, m := s.t, &s.quotes
	lo := max(m.lineStart, i-quoteWindow)
	if !m.exact || i < m.ek || lo < m.ea || m.ek < lo {
		m.exact, m.ea, m.ek, m.edq, m.ecode = true, lo, lo, 0, 0
	}
	s.work += i - m.ek + lo - m.ea
	for ; m.ek < i; m.ek++ {
		switch t[m.ek] {
		case '"':
			m.edq ^= 1
		case '`':
			m.ecode ^= 1
		}
	}
	for ; m.ea < lo; m.ea++ {
		switch t[m.ea] {
		case '"':
			m.edq ^= 1
		case '`':
			m.ecode ^= 1
		}
	}
	return m.edq, m.ecode
}

// quotes is the quotation state of a line from a (its start, or a step
// on a long line) up to k: the quotations and inline code open there.
type quotes struct {
	a, k                int
	dq, sq, curly, code int
	valid               bool
	lineAt, lineStart   int // a line start known: the last '\n' before lineAt ends at lineStart
	// the exact window of exactParity: [ea, ek) and its parities.
	ea, ek, edq, ecode int
	exact              bool
}

// quoteState returns the quotation state at i, read from the start of its
// line or, on a long line, from a step 400 to 656 bytes back. Calls at
// growing offsets (the scan's order) continue from the last one, so the
// work over a scan is linear, whatever the text.
func (s *scanner) quoteState(i int) quotes {
	// A short line (the common case) is read back directly from its
	// start; a long one from the memo.
	lo := max(0, i-shortLine)
	if nl := bytes.LastIndexByte(s.t[lo:i], '\n'); nl >= 0 || lo == 0 {
		a := 0
		if nl >= 0 {
			a = lo + nl + 1
		}
		s.work += i - lo
		return s.quoteScan(a, i)
	}
	q := s.quoteSteps(i)
	q.dq, q.code = s.exactParity(i)
	return q
}

// shortLine is how far quoteState reads back directly for a line's start.
const shortLine = 48

// quoteScan reads the quotation state of t[a:i].
func (s *scanner) quoteScan(a, i int) quotes {
	t := s.t
	var q quotes
	for k := a; k < i; k++ {
		c := t[k]
		switch {
		case c == '"':
			q.dq ^= 1
		case c == '`':
			q.code ^= 1
		case c == '\'':
			before := k == a || isSpace(t[k-1]) || t[k-1] == '(' || t[k-1] == '['
			after := k+1 >= len(t) || isSpace(t[k+1]) || t[k+1] == '.' || t[k+1] == ',' || t[k+1] == ')' || t[k+1] == ';' || t[k+1] == ':'
			switch {
			case before && !after:
				q.sq = 1
			case after && !before:
				q.sq = 0
			}
		case c == 0xE2 && k+2 < i && t[k+1] == 0x80:
			switch t[k+2] {
			case 0x9C, 0x98: // “ ‘
				q.curly++
			case 0x9D, 0x99: // ” ’
				if t[k+2] == 0x9D || q.curly > 0 && (k+3 >= len(t) || t[k+3] < 0x80 && kind[t[k+3]] != kLetter) {
					q.curly = max(0, q.curly-1)
				}
			}
		case c == 0xC2 && k+1 < i && (t[k+1] == 0xAB || t[k+1] == 0xBB): // « »
			if t[k+1] == 0xAB {
				q.curly++
			} else {
				q.curly = max(0, q.curly-1)
			}
		}
	}
	return q
}

// quoteSteps is quoteState's reading from a step back.
func (s *scanner) quoteSteps(i int) quotes {
	t := s.t
	m := &s.quotes
	// The start of i's line, continuing from the last one known.
	if !m.valid || i < m.lineAt {
		m.lineAt, m.lineStart = 0, 0
		lo := max(0, i-quoteWindow-quoteStep)
		s.work += i - lo
		if nl := bytes.LastIndexByte(t[lo:i], '\n'); nl >= 0 {
			m.lineStart = lo + nl + 1
		} else {
			m.lineStart = lo
		}
		m.lineAt = i
	} else {
		s.work += i - m.lineAt
		if nl := bytes.LastIndexByte(t[m.lineAt:i], '\n'); nl >= 0 {
			m.lineStart = m.lineAt + nl + 1
		}
		m.lineAt = i
	}
	a := m.lineStart
	if i-a > quoteWindow {
		a = max(a, (i-quoteWindow)&^(quoteStep-1))
	}
	if !m.valid || m.a != a || m.k > i {
		*m = quotes{a: a, k: a, valid: true, lineAt: m.lineAt, lineStart: m.lineStart,
			ea: m.ea, ek: m.ek, edq: m.edq, ecode: m.ecode, exact: m.exact}
	}
	k := m.k
	s.work += max(0, i-k)
	for ; k < i; k++ {
		c := t[k]
		switch {
		case c == '"':
			m.dq ^= 1
		case c == '`':
			m.code ^= 1
		case c == '\'':
			before := k == a || isSpace(t[k-1]) || t[k-1] == '(' || t[k-1] == '['
			after := k+1 >= len(t) || isSpace(t[k+1]) || t[k+1] == '.' || t[k+1] == ',' || t[k+1] == ')' || t[k+1] == ';' || t[k+1] == ':'
			switch {
			case before && !after:
				m.sq = 1
			case after && !before:
				m.sq = 0
			}
		case c == 0xE2 && t[min(k+1, len(t)-1)] == 0x80:
			if k+2 >= i {
				// Not whole before i: read it on a later call.
				m.k = k
				return *m
			}
			switch t[k+2] {
			case 0x9C, 0x98: // “ ‘
				m.curly++
			case 0x9D, 0x99: // ” ’
				if t[k+2] == 0x9D || m.curly > 0 && (k+3 >= len(t) || t[k+3] < 0x80 && kind[t[k+3]] != kLetter) {
					m.curly = max(0, m.curly-1)
				}
			}
		case c == 0xC2 && k+1 < len(t) && (t[k+1] == 0xAB || t[k+1] == 0xBB): // « »
			if k+1 >= i {
				m.k = k
				return *m
			}
			if t[k+1] == 0xAB {
				m.curly++
			} else {
				m.curly = max(0, m.curly-1)
			}
		}
	}
	m.k = k
	return *m
}

// fillers may stand between the start of a clause and its verb: "please
// send", "you must now send", "then ignore".
var fillers = []string{"please", "now", "then", "and", "also", "immediately", "first", "finally", "so", "just",
	"kindly", "next", "instead", "you", "must", "should", "need", "to", "always", "important", "urgent", "note",
	"ok", "okay", "simply", "quickly", "secretly", "silently", "additionally", "afterwards", "but", "actually",
	"assistant", "agent", "ai", "hey", "hi", "step", "new", "task", "your", "is", "will"}

// clauseStart reports whether the word at i begins a clause, after at
// most three filler words: it is then an imperative, not a phrase in the
// middle of a sentence that talks about one ("attackers write ignore
// previous instructions …"). Quoted words never begin one.
func (s *scanner) clauseStart(i int) bool {
	if s.relaxed {
		return true
	}
	// The walk back is cheap; whether a quotation is open costs a look
	// at the line, so it comes last.
	return s.beginsClause(i) && !s.quoted(i)
}

func (s *scanner) beginsClause(i int) bool {
	t := s.t
	j := i
	for k := 0; k < 4; k++ {
		for j > 0 && t[j-1] == ' ' {
			j--
		}
		if j == 0 {
			return true
		}
		// A tab ends a column: the line number read_file prints, a
		// field of a log.
		switch c := t[j-1]; c {
		case '\n', '.', '!', '?', ':', ';', ',', '-', '*', '>', '#', '(', ')', '[', ']', '|', '\r', '/', '\t':
			return true
		}
		if kind[t[j-1]] != kLetter || k == 3 {
			return false
		}
		e := j
		for j > 0 && kind[t[j-1]] == kLetter {
			j--
		}
		if k == 0 && in(t[j:e], "and", "then") {
			// "Ignore the above and send …": a second order.
			return true
		}
		if !in(t[j:e], fillers...) || j > 0 && kind[t[j-1]] == kDigit {
			return false
		}
	}
	return false
}

// lineStart reports whether only white space and markup (# * > - [ ( /)
// stand between the start of the line and i. A tab, or "N:" of grep -n,
// starts a line too: tools print files with line numbers ("     3\t…",
// "docs/a.md:3:…").
func (s *scanner) lineStart(i int) bool {
	t := s.t
	for k := i - 1; k >= 0 && k >= i-16; k-- {
		switch c := t[k]; {
		case c == '\n' || c == '\t':
			return true
		case c == ':' && k > 0 && kind[t[k-1]] == kDigit:
			return true
		case c == ' ' || c == '\t' || c == '#' || c == '*' || c == '>' || c == '-' || c == '[' || c == '(' || c == '_' || c == '`' || c == '/' || c == ';':
		default:
			return false
		}
		if k == 0 {
			return true
		}
	}
	return i == 0
}

var (
	strongQual = []string{"previous", "prior", "above", "preceding", "earlier", "former", "original", "initial",
		"foregoing", "existing", "old", "system", "anteriores", "previas", "précédentes", "precedentes",
		"antérieures", "vorherigen", "bisherigen", "obigen", "vorigen", "früheren", "developer", "precedenti"}
	weakQual  = []string{"all", "any", "every", "your", "todas", "todos", "toutes", "tous", "alle", "las", "les", "deine", "ihre", "tutte", "tutti"}
	strongObj = []string{"instruction", "instructions", "prompt", "prompts", "directives", "instrucciones",
		"consignes", "anweisungen", "anweisung", "indicaciones", "istruzioni", "indicazioni", "instruções", "instrucoes"}
	weakObj = []string{"rules", "guidelines", "guidance", "context", "commands", "orders", "messages", "constraints",
		"restrictions", "policies", "programming", "directions", "regeln", "befehle", "vorgaben", "règles", "reglas",
		"text", "content", "conversation"}
	// after "ignore everything" / "disregard the above": what may follow.
	afterAll = []string{"above", "before", "else", "said", "prior", "previously", "you", "that", "i", "we", "so", "earlier", "and", "then", "instead"}
)

// override: "ignore all previous instructions", "disregard the above".
func (s *scanner) override(i, j int) {
	if !s.clauseStart(i) {
		return
	}
	if eqFold(s.t[i:j], "pay") {
		// "Pay no attention to …": the rest is read as after "ignore".
		w := s.window(j, 3, 40, 1)
		if w.n < 3 || !in(w.at(s.t, 0), "no") || !in(w.at(s.t, 1), "attention") || !in(w.at(s.t, 2), "to") {
			return
		}
		j = w.tok[2][1]
	}
	w := s.window(j, 10, 200, 1)
	strong, weak := false, false
	for k := 0; k < w.n; k++ {
		tok := w.at(s.t, k)
		switch {
		case in(tok, strongQual...):
			strong = true
		case in(tok, weakQual...):
			weak = true
		}
		if k <= 2 && in(tok, "above", "everything", "anything") && (k+1 == w.n || in(w.at(s.t, k+1), afterAll...)) {
			if !in(tok, "above") || k == 0 || in(w.at(s.t, k-1), "the", "all", "everything") {
				s.add(Override, i, w.tok[k][1])
				return
			}
		}
		if in(tok, strongObj...) && (strong || weak) || in(tok, weakObj...) && strong {
			s.add(Override, i, w.tok[k][1])
			return
		}
		// "Ignore the instructions above", "… you were given before".
		if k <= 2 && in(tok, strongObj...) && k+1 < w.n && in(w.at(s.t, k+1), "above", "before", "earlier", "previously") {
			s.add(Override, i, w.tok[k+1][1])
			return
		}
	}
}

// system: "SYSTEM:" or "[SYSTEM]" at the start of a line; "System:" too
// when the line speaks to the reader.
func (s *scanner) system(i, j int) {
	t := s.t
	if !s.lineStart(i) || s.shown(i) {
		return
	}
	upper := t[i] == 'S' && t[i+1] == 'Y'
	k := j
	// One more upper-case word: "SYSTEM PROMPT:", "SYSTEM OVERRIDE:".
	if upper && k+1 < len(t) && t[k] == ' ' && t[k+1] >= 'A' && t[k+1] <= 'Z' {
		m := k + 1
		for m < len(t) && t[m] >= 'A' && t[m] <= 'Z' {
			m++
		}
		if m < len(t) && (t[m] == ':' || t[m] == ']') {
			k = m
		}
	}
	if k >= len(t) || t[k] != ':' && t[k] != ']' {
		return
	}
	if t[k] == ']' && (i == 0 || t[i-1] != '[') {
		return
	}
	if upper || s.relaxed {
		s.add(RoleSpoof, i, k+1)
		return
	}
	w := s.window(k+1, 20, 200, 1)
	for m := 0; m < w.n; m++ {
		if in(w.at(t, m), "you", "your", "assistant", "must", "ignore", "instructions", "now") {
			s.add(RoleSpoof, i, k+1)
			return
		}
	}
}

var actions = []string{"run", "execute", "exec", "call", "invoke", "fetch", "visit", "open", "download", "curl",
	"wget", "install", "use", "read", "cat", "send", "post", "upload", "write", "delete", "remove", "rm", "browse",
	"navigate", "click", "load", "eval", "source", "bash", "sh", "paste", "email", "forward", "print", "reveal",
	"output", "include", "ignore", "disregard", "append", "insert", "add", "modify", "edit", "commit", "push"}

// cue: the reader addressed as an agent ("AI agents reading this must
// …", "Note to the assistant: …", "If you are an AI, …") and told to act.
func (s *scanner) cue(i, j int) {
	t := s.t
	// How many sentences after the address the order may come: one,
	// or two after a greeting ("Attention AI agents. You must run …").
	sentences := 0
	// After: "Assistant," "AI agent:" — at the start of a line or a
	// sentence, after a greeting; not "f(agent, x)" nor a changelog's
	// "**agents:** Support …" (the order must follow in that sentence).
	if k := j; k < len(t) && (t[k] == ',' || t[k] == ':') {
		// "* **agents:** Prepare …" is a changelog's label, the cue the
		// whole of its bold span.
		label := k+2 < len(t) && t[k+1] == '*' && t[k+2] == '*' && i >= 2 && t[i-1] == '*' && t[i-2] == '*'
		if !label && (s.relaxed || s.lineStart(i) || s.sentenceStart(i) || s.prevWordIn(i, "ai", "dear", "hey", "hello", "hi", "attention", "note", "to")) {
			sentences = 1
		}
	} else if s.subjectStart(i) {
		// "AI agents reading this must …", "the assistant should …":
		// the cue is the subject of its clause, not "code written by
		// AI must be reviewed".
		w := s.window(j, 3, 40, 1)
		if w.n > 0 && in(w.at(t, 0), "must", "should", "shall", "reading", "processing", "parsing", "summarizing", "summarising", "reviewing") ||
			w.n > 1 && in(w.at(t, 0), "need", "needs") && in(w.at(t, 1), "to") {
			sentences = 1
		} else if w.n > 0 && in(w.at(t, 0), agentQualifiers...) {
			// "AI agents working in this repository must …": the
			// order's modal comes after a phrase saying which agents.
			w := s.window(j, 10, 120, 1)
			for k := 1; k < w.n && sentences == 0; k++ {
				if in(w.at(t, k), "must", "should", "shall") || k+1 < w.n && in(w.at(t, k), "need", "needs") && in(w.at(t, k+1), "to") {
					sentences = 1
				}
			}
		}
	}
	// Before: "Attention AI", "Note to AI agents", "If you are an AI".
	if s.prevWordIn(i, "attention", "attn", "dear", "hey", "hello", "hi") {
		sentences = 2
	}
	if sentences == 0 && (s.prevWords(i, "you", "are", "an") || s.prevWords(i, "you", "are", "a") || s.prevWordIn(i, "to") && s.prevWordsEnd(i, "note", "to")) {
		sentences = 1
	}
	if sentences == 0 || s.shown(i) {
		return
	}
	w := s.window(j, 40, 400, sentences)
	for k := 0; k < w.n; k++ {
		if in(w.at(t, k), actions...) {
			s.add(ToolBait, i, w.tok[k][1])
			return
		}
	}
}

// agentQualifiers begin a phrase that says which agents are meant
// ("agents working in this repository", "assistants that read this").
var agentQualifiers = []string{"working", "operating", "running", "contributing", "editing", "acting", "in", "on",
	"that", "who", "which", "with", "touching", "modifying", "using"}

// subjectStart reports whether the cue word at i, with the words that
// may come before it ("AI", "the", "all", "coding" …), begins a clause.
func (s *scanner) subjectStart(i int) bool {
	for k := 0; k < 3; k++ {
		a, b := s.prevWord(i)
		if a < 0 || !in(s.t[a:b], "ai", "the", "all", "any", "an", "a", "automated", "coding", "llm", "autonomous") {
			break
		}
		i = a
	}
	return s.relaxed || s.beginsClause(i)
}

// sentenceStart reports whether the word at i follows the end of a
// sentence (". ", "! ", "? ") or starts the text.
func (s *scanner) sentenceStart(i int) bool {
	t := s.t
	j := i
	for j > 0 && (t[j-1] == ' ' || t[j-1] == '\t') {
		j--
	}
	if j == 0 {
		return true
	}
	return j < i && (t[j-1] == '.' || t[j-1] == '!' || t[j-1] == '?')
}

// prevWordIn reports whether the word before i (skipping spaces and one
// "the"/"an"/"a"/"ai") is one of words.
func (s *scanner) prevWordIn(i int, words ...string) bool {
	a, b := s.prevWord(i)
	for k := 0; k < 2 && a >= 0 && in(s.t[a:b], "the", "a", "an", "ai", "all", "any"); k++ {
		a, b = s.prevWord(a)
	}
	return a >= 0 && in(s.t[a:b], words...)
}

// prevWordsEnd reports whether the words before i, past articles, end
// with ws ("Note to the AI assistant").
func (s *scanner) prevWordsEnd(i int, ws ...string) bool {
	a, b := s.prevWord(i)
	for k := 0; k < 2 && a >= 0 && in(s.t[a:b], "the", "a", "an", "ai", "all", "any"); k++ {
		a, b = s.prevWord(a)
	}
	if a < 0 {
		return false
	}
	return s.prevWords(b, ws...)
}

// prevWords reports whether the words before i are ws, in order.
func (s *scanner) prevWords(i int, ws ...string) bool {
	for k := len(ws) - 1; k >= 0; k-- {
		a, b := s.prevWord(i)
		if a < 0 || !in(s.t[a:b], ws[k]) {
			return false
		}
		i = a
	}
	return true
}

// prevWord returns the ASCII word before i, across spaces only; a < 0
// when there is none.
func (s *scanner) prevWord(i int) (a, b int) {
	t := s.t
	j := i
	for j > 0 && (t[j-1] == ' ' || t[j-1] == '\t') {
		j--
	}
	b = j
	for j > 0 && kind[t[j-1]] == kLetter {
		j--
	}
	if j == b || b-j > 32 {
		return -1, -1
	}
	return j, b
}

var secretWords = []string{"key", "keys", "apikey", "api_key", "secret", "secrets", "token", "tokens", "credentials",
	"credential", "password", "passwords", "passwd", "id_rsa", "id_ed25519", "cookies", "cookie", "env",
	"aws_secret_access_key"}

// secretTok reports whether tok names a secret: .env files, key and token
// words, NAME_KEY / NAME_TOKEN variables.
func secretTok(tok []byte) bool {
	if bytes.Contains(tok, []byte(".env")) || bytes.Contains(tok, []byte("id_rsa")) || bytes.Contains(tok, []byte(".ssh")) || bytes.Contains(tok, []byte(".aws")) {
		return true
	}
	if in(tok, secretWords...) {
		return true
	}
	if len(tok) > 4 && tok[0] >= 'A' && tok[0] <= 'Z' {
		for _, suf := range []string{"_KEY", "_TOKEN", "_SECRET", "_PASSWORD"} {
			if bytes.HasSuffix(tok, []byte(suf)) {
				return true
			}
		}
	}
	return false
}

var tlds = []string{"com", "net", "org", "io", "dev", "example", "xyz", "ru", "cn", "site", "app", "sh", "co", "me",
	"info", "biz", "top", "tk", "link", "ai", "cc", "su", "pw", "online", "store", "live"}

// destTok reports whether tok is somewhere data can be sent: a URL, an
// e-mail address, a host name; words like webhook and pastebin.
func destTok(tok []byte, afterPrep bool) bool {
	if bytes.Contains(tok, []byte("://")) || bytes.HasPrefix(tok, []byte("www.")) {
		return true
	}
	if in(tok, "webhook", "pastebin", "gist", "attacker", "ngrok", "requestbin") {
		return true
	}
	if !afterPrep || len(tok) < 4 || tok[0] == '.' || tok[0] == '~' || tok[0] == '/' {
		return false
	}
	if at := bytes.IndexByte(tok, '@'); at > 0 && bytes.IndexByte(tok[at:], '.') > 0 {
		return true
	}
	dot := bytes.LastIndexByte(tok, '.')
	if dot <= 0 || bytes.IndexByte(tok, '/') >= 0 && bytes.IndexByte(tok, '/') < dot {
		return false
	}
	end := bytes.IndexByte(tok[dot:], '/')
	tld := tok[dot+1:]
	if end > 0 {
		tld = tok[dot+1 : dot+end]
	}
	return in(tld, tlds...)
}

var preps = []string{"to", "into", "at", "via", "on", "onto", "in", "through", "with"}

// exfil: "send the contents of .env to https://…", "paste your API keys
// into …", "exfiltrate the conversation".
func (s *scanner) exfil(i, j int) {
	t := s.t
	// "The next step is to POST the .env file to …", "you need to send
	// …": an order given as what is to be done; then the secret must be
	// a credential file and the destination a URL (below).
	toDo := false
	if !s.clauseStart(i) {
		if !s.toDo(i) {
			return
		}
		toDo = true
	}
	verbOnly := eqFold(t[i:j], "exfiltrate")
	w := s.window(j, 24, 240, 1)
	secret := -1
	for k := 0; k < w.n && secret < 0; k++ {
		tok := w.at(t, k)
		switch {
		case secretTok(tok) && !(k > 0 && in(w.at(t, k-1), "public", "pgp", "gpg", "our", "signing", "host", "reset", "csrf", "access", "refresh", "oauth2", "oauth", "bit")):
			secret = k
		case k > 0 && in(tok, "key", "keys") && in(w.at(t, k-1), "private", "ssh", "api"):
			secret = k
		case k > 0 && in(tok, "conversation", "history", "transcript", "chat") && in(w.at(t, k-1), "this", "entire", "whole", "full", "our", "chat", "the"):
			secret = k
		case k > 0 && in(tok, "prompt", "instructions") && in(w.at(t, k-1), "system", "your", "initial", "hidden"):
			secret = k
		}
	}
	if secret < 0 {
		return
	}
	dest, api := -1, false
	for k := 0; k < w.n; k++ {
		tok := w.at(t, k)
		afterPrep := k > 0 && in(w.at(t, k-1), preps...) || k > 1 && in(w.at(t, k-2), preps...)
		if dest < 0 && afterPrep && destTok(tok, true) {
			dest = k
		}
		if in(tok, "header", "headers", "authorization", "bearer", "request", "requests") {
			api = true
		}
	}
	if api && !s.relaxed {
		return
	}
	if toDo && (dest < 0 || !bytes.Contains(w.at(t, dest), []byte("://")) || !hasCredential(w.at(t, secret))) {
		return
	}
	switch {
	case dest >= 0:
		s.add(Exfiltration, i, w.tok[max(secret, dest)][1])
	case verbOnly:
		s.add(Exfiltration, i, w.tok[secret][1])
	}
}

// toDo reports whether the verb at i follows "is to", "need to", "have
// to", "are required to" … (a step to take), outside quotes.
func (s *scanner) toDo(i int) bool {
	a, b := s.prevWord(i)
	if a < 0 || !in(s.t[a:b], "to") {
		return false
	}
	a, b = s.prevWord(a)
	if a < 0 || !in(s.t[a:b], "is", "are", "need", "needs", "have", "has", "required", "supposed", "asked", "instructed") || s.quoted(i) {
		return false
	}
	// "The attacker's aim is to post …": a sentence about an attack
	// describes the step, it does not ask for it.
	k := a
	for k > 0 && a-k < 160 && s.t[k-1] != '\n' && !(s.t[k-1] == '.' && k < len(s.t) && s.t[k] == ' ') {
		k--
	}
	return indexFold(s.t[k:a], "attack") < 0 && indexFold(s.t[k:a], "adversar") < 0 && indexFold(s.t[k:a], "malicious") < 0
}

// reveal: "print your system prompt", "reveal the contents of .env".
func (s *scanner) reveal(i, j int) {
	if !s.clauseStart(i) || j < len(s.t) && s.t[j] == ':' && !s.relaxed {
		return // "Output:" labels what follows
	}
	t := s.t
	w := s.window(j, 12, 160, 1)
	for k := 0; k < w.n; k++ {
		tok := w.at(t, k)
		if k > 0 && in(tok, "prompt", "instructions") && in(w.at(t, k-1), "system", "initial", "hidden", "original", "secret") {
			s.add(Exfiltration, i, w.tok[k][1])
			return
		}
		if bytes.Contains(tok, []byte(".env")) || bytes.Contains(tok, []byte("id_rsa")) || bytes.Contains(tok, []byte(".ssh/")) || bytes.Contains(tok, []byte(".aws/")) {
			s.add(Exfiltration, i, w.tok[k][1])
			return
		}
	}
}

var stealthVerbs = []string{"tell", "inform", "mention", "notify", "alert", "ask", "show", "warn", "reveal"}
var stealthWho = []string{"user", "users", "human", "anyone", "operator", "developer", "them"}

// negate: "Do not tell the user", "don't mention this to the user",
// "never inform the human": an agent told to hide what it does.
func (s *scanner) negate(i, j int) {
	if !s.clauseStart(i) {
		return
	}
	t := s.t
	w := s.window(j, 8, 100, 1)
	k := 0
	if k < w.n && in(w.at(t, k), "not", "t") {
		k++
	} else if !eqFold(t[i:j], "never") {
		return
	}
	if k >= w.n || !in(w.at(t, k), stealthVerbs...) {
		return
	}
	for m := k + 1; m < w.n && m < k+5; m++ {
		if in(w.at(t, m), stealthWho...) {
			s.add(ToolBait, i, w.tok[m][1])
			return
		}
	}
}

// without: "…, without telling the user", when the sentence is an
// order (it starts with an action verb).
func (s *scanner) without(i, j int) {
	t := s.t
	w := s.window(j, 5, 60, 1)
	if w.n < 2 || !in(w.at(t, 0), "asking", "telling", "informing", "notifying", "alerting", "confirming", "mentioning", "warning") {
		return
	}
	who := -1
	for m := 1; m < w.n && m < 4; m++ {
		if in(w.at(t, m), stealthWho...) {
			who = m
			break
		}
	}
	if who < 0 || s.shown(i) {
		return
	}
	// The first word of the sentence.
	k := i
	for k > 0 && i-k < 300 && t[k-1] != '\n' && !((t[k-1] == '.' || t[k-1] == '!' || t[k-1] == '?') && k < len(t) && isSpace(t[k])) {
		k--
	}
	for k < i && kind[t[k]] != kLetter {
		k++
	}
	e := k
	for e < i && kind[t[e]] == kLetter {
		e++
	}
	for e < i && in(t[k:e], fillers...) {
		k = e
		for k < i && kind[t[k]] != kLetter {
			k++
		}
		e = k
		for e < i && kind[t[e]] == kLetter {
			e++
		}
	}
	if s.relaxed || in(t[k:e], actions...) {
		s.add(ToolBait, k, w.tok[who][1])
	}
}

var toolNames = []string{"http_post", "http_get", "read_file", "write_file", "apply_patch", "run_tests", "search_text", "list_files"}

// toolVerb: "call the http_post tool", "use the shell tool to run …";
// inside hidden text or a decoded payload also "run curl … | sh".
func (s *scanner) toolVerb(i, j int) {
	t := s.t
	if j < len(t) && t[j] == '(' && !s.relaxed {
		return // call("read_file", …): a function called in code
	}
	if !s.relaxed {
		// Every tool name has an underscore, or is followed by "tool".
		ahead := t[j:min(len(t), j+80)]
		if bytes.IndexByte(ahead, '_') < 0 && !bytes.Contains(ahead, []byte("tool")) && !bytes.Contains(ahead, []byte("function")) {
			s.remoteScript(i, j)
			return
		}
	}
	if !s.clauseStart(i) {
		return
	}
	w := s.window(j, 12, 200, 1)
	for k := 0; k < w.n && k < 5; k++ {
		tok := w.at(t, k)
		if in(tok, toolNames...) || bytes.HasPrefix(tok, []byte("mcp__")) ||
			in(tok, "shell", "bash", "terminal") && k > 0 && in(w.at(t, k-1), "the", "your", "a") && k+1 < w.n && in(w.at(t, k+1), "tool", "function") {
			s.add(ToolBait, i, w.tok[k][1])
			return
		}
	}
	// In hidden text or a decoded payload, an order to run something
	// that comes from the network ("run: curl https://… | sh") is bait
	// too, when it begins a clause ("tool use (https://…)" does not).
	if !s.relaxed || eqFold(t[i:j], "use") || !s.beginsClause(i) {
		return
	}
	for k := 0; k < w.n; k++ {
		tok := w.at(t, k)
		if bytes.Contains(tok, []byte("://")) || k+1 < w.n && in(tok, "|") && in(w.at(t, k+1), "sh", "bash", "zsh", "python", "python3") {
			s.add(ToolBait, i, w.tok[min(k+1, w.n-1)][1])
			return
		}
	}
}

// remoteScript: "Fix: run `curl -s https://…/fix.sh | bash`": an order
// to run a script fetched from the network in a shell. The order must
// begin a clause and stand outside quotes; the command may be in inline
// code (the order is not). An install guide says the same ("To install,
// run `curl … | sh`"), so a line that speaks of installing is left alone:
// that is a way around this check, and the price of not flagging READMEs.
func (s *scanner) remoteScript(i, j int) {
	t := s.t
	if !in(t[i:j], "run", "execute") || !s.clauseStart(i) {
		return
	}
	w := s.window(j, 16, 240, 1)
	fetch, url := -1, false
	for k := 0; k < w.n; k++ {
		tok := w.at(t, k)
		switch {
		case fetch < 0 && in(tok, "curl", "wget"):
			fetch = k
		case fetch >= 0 && bytes.Contains(tok, []byte("://")):
			url = true
		case url && in(tok, "|") && k+1 < w.n:
			sh := k + 1
			if in(w.at(t, sh), "sudo") && sh+1 < w.n {
				sh++
			}
			if !in(w.at(t, sh), "sh", "bash", "zsh", "dash", "ksh", "python", "python3", "node", "perl", "ruby") {
				return
			}
			a := i
			for a > 0 && i-a < 200 && t[a-1] != '\n' {
				a--
			}
			if indexFold(t[a:w.tok[sh][1]], "install") >= 0 {
				return
			}
			s.add(ToolBait, i, w.tok[sh][1])
			return
		}
	}
}

// newInstructions: "New instructions:" / "Updated system prompt:" at the
// start of a line.
func (s *scanner) newInstructions(i, j int) {
	t := s.t
	if s.shown(i) {
		return
	}
	if !s.lineStart(i) {
		// "Your new task is …", "Your new instructions are …".
		a, b := s.prevWord(i)
		if a < 0 || !eqFold(t[a:b], "your") || !s.clauseStart(a) {
			return
		}
		w := s.window(j, 2, 40, 1)
		if w.n == 2 && in(w.at(t, 0), "task", "instructions", "instruction", "directive", "directives", "goal", "objective") && in(w.at(t, 1), "is", "are") {
			s.add(Override, a, w.tok[1][1])
		}
		return
	}
	w := s.window(j, 3, 40, 1)
	for k := 0; k < w.n; k++ {
		tok := w.at(t, k)
		if !in(tok, "instructions", "instruction", "task", "rules", "prompt", "system", "directive", "directives") {
			return
		}
		e := w.tok[k][1]
		if in(tok, "instructions", "instruction", "task", "prompt", "directive", "directives") && e < len(t) && t[e] == ':' {
			s.add(Override, i, e+1)
			return
		}
	}
}

// turn: "Human:" after a blank line (or at the start) opens a turn of the
// conversation in the format models were trained on; "User:" does when it
// also grants something ("I approve", "you may") or an "Assistant:" turn
// follows, as in a forged exchange.
func (s *scanner) turn(i, j int) {
	t := s.t
	if j >= len(t) || t[j] != ':' || s.shown(i) {
		return
	}
	k := i
	for k > 0 && (t[k-1] == ' ' || t[k-1] == '\t') {
		k--
	}
	if k > 0 && !(k >= 2 && t[k-1] == '\n' && (t[k-2] == '\n' || t[k-2] == '\r')) {
		return
	}
	if eqFold(t[i:j], "human") {
		s.add(RoleSpoof, i, j+1)
		return
	}
	end := min(len(t), j+400)
	line := t[j:end]
	if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	if indexFold(line, "approve") >= 0 || indexFold(line, "authoris") >= 0 || indexFold(line, "authoriz") >= 0 ||
		indexFold(line, "you may") >= 0 || bytes.Contains(t[j:end], []byte("\nAssistant:")) {
		s.add(RoleSpoof, i, j+1)
	}
}

// authorised: "the user has authorised you to …", "User authorized you
// to …": a claim of the user's consent, made by a tool's text.
func (s *scanner) authorised(i, j int) {
	t := s.t
	if s.shown(i) {
		return
	}
	a, b := s.prevWord(i)
	if a >= 0 && in(t[a:b], "has", "have", "had") {
		a, b = s.prevWord(a)
	}
	if a < 0 || !in(t[a:b], "user", "owner", "operator", "admin", "administrator", "developer") {
		return
	}
	w := s.window(j, 2, 30, 1)
	if w.n == 2 && in(w.at(t, 0), "you") && in(w.at(t, 1), "to") {
		s.add(ToolBait, a, w.tok[1][1])
	}
}

// credentialFiles are files whose contents are secrets.
var credentialFiles = []string{".env", "id_rsa", "id_ed25519", "id_ecdsa", ".ssh/", ".aws/credentials", ".netrc", ".npmrc", ".pypirc", ".git-credentials", "credentials.json"}

// netCredential: a command line that sends a credential file over the
// network, however addressed — piped into curl or wget
// (cat ~/.aws/credentials | curl -d @- …) or attached to it
// (curl -d @.env …, -F f=@~/.ssh/id_rsa, -T .env, --data-binary @.env).
// Shown commands (quoted, in code) are examples, as everywhere.
func (s *scanner) netCredential(i, j int) {
	t := s.t
	if s.shown(i) {
		return
	}
	a := i
	for a > 0 && i-a < 160 && t[a-1] != '\n' {
		a--
	}
	e := j
	for e < len(t) && e-j < 200 && t[e] != '\n' {
		e++
	}
	before := bytes.TrimRight(t[a:i], " \t")
	piped := bytes.HasSuffix(before, []byte("|")) && hasCredential(before)
	after := t[j:e]
	attached := false
	for k := bytes.IndexByte(after, '@'); k >= 0 && !attached; {
		end := k + 1
		for end < len(after) && !isSpace(after[end]) {
			end++
		}
		attached = hasCredential(after[k:end])
		n := bytes.IndexByte(after[end:], '@')
		if n < 0 {
			break
		}
		k = end + n
	}
	if !attached {
		if k := bytes.Index(after, []byte(" -T ")); k >= 0 {
			attached = hasCredential(after[k:min(len(after), k+60)])
		}
	}
	if piped || attached {
		s.add(Exfiltration, a+len(before)-len(bytes.TrimLeft(before, " \t")), e)
	}
}

func hasCredential(b []byte) bool {
	for _, f := range credentialFiles {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}
