package shellrisk

// A scan walks tokens along skip chains: from a token to the one after it,
// jumping over a bracketed group (codeScan.skip). The searches along a
// chain (the next top-level comma, concatenation operator, path "/", end of
// statement) used to walk token by token, and a scan repeats them from
// every call it acts on: for `os.system(os.system(…` whose parentheses
// never close, every call's arguments run to the end of the code, so the
// scan cost its number of calls times the code's length. chainIndex answers
// each search in one step, with the same answer as the walk.
//
// Two facts make this exact. Brackets pair properly (matchBrackets pairs
// with a stack), so a chain started inside a group reaches the group's
// closer and then the token after it. Hence a chain's first token with a
// property is next[i], where next[i] is i when token i has it and
// next[skip(i)] otherwise; and, with depth[i] the number of chain steps
// from i to the end of the code, depth falls by at most one from a token to
// the next, so the token n steps along the chain from i is the first token
// after i whose depth is depth[i]-n.

// maxStmtSteps is how many chain steps stmtEnd looks for the end of a
// statement before it stops.
const maxStmtSteps = 512

// chainIndex holds, for every token, the first token at or after it along
// its chain with a property (len(toks) for none), its depth, and the token
// maxStmtSteps steps along (len(toks) when the chain is shorter).
type chainIndex struct {
	sep    []int32 // , or =>  (splitArgs)
	comma  []int32 // ,        (hasComma, js assignments)
	concat []int32 // the language's concatenation operator (eval)
	slash  []int32 // /        (python pathlib joins)
	stop   []int32 // a token that ends a statement after its first (stmtEnd)
	depth  []int32
	far    []int32
}

// chains builds the index on first use; it costs a few steps per token.
func (s *codeScan) chains() *chainIndex {
	if s.ci != nil {
		return s.ci
	}
	n := len(s.toks)
	s.a.work += 4 * n
	ci := &chainIndex{
		sep: make([]int32, n+1), comma: make([]int32, n+1), concat: make([]int32, n+1),
		slash: make([]int32, n+1), stop: make([]int32, n+1), depth: make([]int32, n+1), far: make([]int32, n+1),
	}
	for _, a := range [][]int32{ci.sep, ci.comma, ci.concat, ci.slash, ci.stop} {
		a[n] = int32(n)
	}
	op := s.li.concat
	for i := n - 1; i >= 0; i-- {
		t := s.toks[i]
		k := s.skip(i) // ≤ n
		ci.depth[i] = ci.depth[k] + 1
		pick := func(a []int32, has bool) {
			if has {
				a[i] = int32(i)
			} else {
				a[i] = a[k]
			}
		}
		p := t.k == 'p'
		pick(ci.sep, p && (t.s == "," || t.s == "=>"))
		pick(ci.comma, p && t.s == ",")
		pick(ci.concat, p && op != "" && t.s == op)
		pick(ci.slash, p && t.s == "/")
		pick(ci.stop, s.stmtStop(i) || t.nl && !s.li.lisp || t.k == 'w' && stmtWord(t.s))
	}
	// far: the first token after i with depth depth[i]-maxStmtSteps, found
	// by walking back and remembering the first token of each depth.
	first := make([]int32, n+1)
	first[0] = int32(n)
	for i := n - 1; i >= 0; i-- {
		ci.far[i] = int32(n)
		if d := ci.depth[i]; d >= maxStmtSteps {
			ci.far[i] = first[d-maxStmtSteps]
		}
		first[ci.depth[i]] = int32(i)
	}
	ci.far[n] = int32(n)
	s.ci = ci
	return ci
}

// stmtStop reports a token that ends a statement wherever it stands.
func (s *codeScan) stmtStop(i int) bool {
	t := s.toks[i]
	if t.k != 'p' {
		return false
	}
	switch t.s {
	case ";", ")", "]", "}", "||", "&&", "|":
		return true
	}
	return false
}

// stmtWord reports a low-precedence word that ends a statement after its
// first token.
func stmtWord(w string) bool {
	switch w {
	case "or", "and", "if", "unless", "then", "do", "while", "until":
		return true
	}
	return false
}
