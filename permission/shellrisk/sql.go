package shellrisk

import (
	"strings"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// ruleSQL finds the SQL (or Mongo or Redis commands) a database client runs
// and judges the statements that destroy data.
func ruleSQL(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	local := name == "sqlite3" || name == "sqlite" || name == "duckdb"
	if !local {
		a.network(c.sp, quote(name), name+" connects to a database server")
	}
	var code []arg
	switch name {
	case "psql":
		os, _ := a.scan(opts{short: "cfdhpUvoLPTFRzS", long: []string{"command", "file", "dbname", "host", "port", "username", "set", "variable", "output", "log-file", "pset"}}, c.args)
		code = vals(os, "-c", "--command")
		a.sqlFiles(c, os, "-f", "--file")
		if f, ok := val(os, "-o", "--output"); ok {
			a.access(f, c.cwd, true, false)
		}
	case "mysql", "mariadb":
		os, _ := a.scan(opts{short: "eDhPuSpC", long: []string{"execute", "database", "host", "port", "user", "socket", "init-command"}}, c.args)
		code = vals(os, "-e", "--execute", "--init-command")
	case "sqlite3", "sqlite", "duckdb":
		// Options are spelled with one dash (-cmd, -init); the first operand
		// is the database file and the rest is SQL.
		var o []arg
		for i := 1; i < len(c.args); i++ {
			x := c.args[i]
			switch {
			case x.s == "-cmd" || x.s == "--cmd" || x.s == "-c":
				if i+1 < len(c.args) {
					i++
					code = append(code, c.args[i])
				}
			case x.s == "-init" || x.s == "--init":
				if i+1 < len(c.args) {
					i++
					a.access(c.args[i], c.cwd, false, false)
					a.find(risk.Execute, c.args[i].sp, name+" runs SQL from "+quote(c.args[i].s)+", which is not checked")
				}
			case x.s == "-separator" || x.s == "-nullvalue" || x.s == "-newline" || x.s == "-vfs":
				i++
			case strings.HasPrefix(x.s, "-") && !x.dyn:
			default:
				o = append(o, x)
			}
		}
		if len(o) > 0 {
			a.access(o[0], c.cwd, true, false)
			code = append(code, o[1:]...)
		}
	case "mongo", "mongosh":
		os, _ := a.scan(opts{long: []string{"eval", "host", "port", "username", "password", "file"}}, c.args)
		code = vals(os, "--eval")
	case "redis-cli":
		_, o := a.scan(opts{short: "hpansuc", long: []string{"user", "pass", "tls", "cacert", "cert", "key", "sni"}}, c.args)
		if len(o) > 0 {
			var b strings.Builder
			for i, x := range o {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(x.s)
			}
			code = []arg{{s: b.String(), sp: c.sp}}
		}
	case "clickhouse-client", "cqlsh":
		os, _ := a.scan(opts{short: "qehpud", long: []string{"query", "execute", "host", "port", "user", "database"}}, c.args)
		code = vals(os, "-q", "--query", "-e", "--execute")
	}
	if len(code) == 0 {
		switch c.in.kind {
		case inHere, inPipe:
			if c.in.known {
				code = []arg{{s: c.in.text, sp: c.in.sp}}
				break
			}
			a.find(risk.Execute, c.sp, name+" runs statements read from its input, which are not checked")
		case inFile:
			a.find(risk.Execute, c.sp, name+" runs statements read from its input, which are not checked")
		}
	}
	for _, x := range code {
		if x.dyn {
			a.opaque(x.sp, name+" runs a statement built at run time")
			continue
		}
		a.judgeSQL(name, x)
	}
}

func (a *analyzer) sqlFiles(c *call, os []opt, names ...string) {
	for _, f := range vals(os, names...) {
		a.access(f, c.cwd, false, false)
		a.find(risk.Execute, f.sp, "the client runs SQL from "+quote(f.s)+", which is not checked")
	}
}

// vals returns the values of every use of the named options.
func vals(os []opt, names ...string) []arg {
	var out []arg
	for _, o := range os {
		for _, n := range names {
			if o.name == n {
				out = append(out, o.val)
			}
		}
	}
	return out
}

// judgeSQL reports destroying statements in code.
func (a *analyzer) judgeSQL(client string, x arg) {
	switch client {
	case "mongo", "mongosh":
		for _, verb := range [...]string{"dropDatabase", ".drop(", "deleteMany", ".remove(", "dropUser", "dropAllUsers", "dropIndexes", "findOneAndDelete", "deleteOne", "bulkWrite"} {
			if strings.Contains(x.s, verb) {
				a.find(risk.Destructive, x.sp, "the Mongo script deletes data ("+verb+")")
				return
			}
		}
		return
	case "redis-cli":
		fields := strings.Fields(strings.ToUpper(x.s))
		if len(fields) > 0 {
			switch fields[0] {
			case "FLUSHALL", "FLUSHDB", "DEL", "UNLINK", "SHUTDOWN", "SWAPDB":
				a.find(risk.Destructive, x.sp, "redis "+fields[0]+" deletes data")
			case "CONFIG", "EVAL", "EVALSHA", "MODULE", "SCRIPT", "DEBUG", "FUNCTION":
				a.find(risk.Execute, x.sp, "redis "+fields[0]+" changes the server or runs code on it")
			}
		}
		return
	}
	for _, st := range sqlStatements(x.s) {
		if why := destroyingSQL(st); why != "" {
			a.find(risk.Destructive, x.sp, why)
		}
		if strings.HasPrefix(st, "\\!") || strings.HasPrefix(st, ".SHELL") || strings.HasPrefix(st, ".SYSTEM") ||
			strings.Contains(st, "TO PROGRAM") || strings.Contains(st, "FROM PROGRAM") || strings.HasPrefix(st, "SYSTEM ") {
			a.opaque(x.sp, "the SQL runs a shell command")
		}
	}
}

// destroyingSQL says why a normalised statement destroys data, or "".
func destroyingSQL(st string) string {
	words := strings.Fields(st)
	if len(words) == 0 {
		return ""
	}
	switch words[0] {
	case "DROP", "TRUNCATE":
		return "the SQL statement " + words[0] + " deletes data or tables for good"
	case "ALTER":
		return "the SQL statement ALTER changes a table's structure and can drop columns"
	case "DELETE", "UPDATE":
		if !containsWord(words, "WHERE") {
			return "the SQL statement " + words[0] + " without WHERE changes every row of the table"
		}
		if alwaysTrue(words) {
			return "the SQL statement " + words[0] + " has a WHERE that holds for every row (1=1, TRUE, OR 1=1), so it changes the whole table"
		}
	case "REPLACE", "MERGE":
		return "the SQL statement " + words[0] + " overwrites rows"
	case "VACUUM", "REINDEX":
		return ""
	}
	if containsWord(words, "DROP") && (words[0] == "WITH" || words[0] == "EXECUTE" || words[0] == "EXEC") {
		return "the SQL statement drops database objects"
	}
	return ""
}

// alwaysTrue reports a WHERE clause (in normalised words) that holds for
// every row: 1, TRUE, 1=1, x=x (two equal literals), or any of those joined by OR at the
// top level.
func alwaysTrue(words []string) bool {
	at := -1
	for i, w := range words {
		if w == "WHERE" {
			at = i
		}
	}
	var cond []string
	for _, w := range words[at+1:] {
		if w == "ORDER" || w == "LIMIT" || w == "RETURNING" {
			break
		}
		cond = append(cond, w)
	}
	text := strings.Join(cond, " ")
	if strings.ContainsAny(text, "()") {
		text = strings.Trim(text, "() ")
		if strings.ContainsAny(text, "()") {
			return false
		}
	}
	for _, or := range strings.Split(" "+text+" ", " OR ") {
		if strings.Contains(or, " AND ") {
			continue
		}
		t := strings.ReplaceAll(or, " ", "")
		switch t {
		case "1", "TRUE", "NOTFALSE", "NOT0":
			return true
		}
		if l, r, ok := strings.Cut(t, "="); ok && l == r && l != "" && !strings.ContainsAny(l, "<>!=") {
			return true
		}
	}
	return false
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// sqlStatements normalises SQL: comments and string literals removed, upper
// case, split at semicolons, whitespace collapsed.
func sqlStatements(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if t := strings.TrimSpace(b.String()); t != "" {
			out = append(out, strings.ToUpper(t))
		}
		b.Reset()
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '-' && i+1 < len(s) && s[i+1] == '-', ch == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte(' ')
		case ch == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 3
			}
			b.WriteByte(' ')
		case ch == '\'' || ch == '"' || ch == '`':
			// Quoted identifiers keep their text; string literals do not matter.
			j := i + 1
			for j < len(s) && s[j] != ch {
				j++
			}
			if ch != '\'' && j < len(s) {
				b.WriteString(s[i+1 : j])
			} else {
				b.WriteString("''")
			}
			i = j
		case ch == ';':
			flush()
		case ch == '\n' || ch == '\t' || ch == '\r':
			b.WriteByte(' ')
		default:
			b.WriteByte(ch)
		}
	}
	flush()
	return out
}
