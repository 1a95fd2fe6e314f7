package permission

// JSON Schemas of the built-in tools' arguments (DESIGN.md §2). The router
// validates calls against them; they live here so there is one table.
// They are constants so the table cannot be changed at run time.
const (
	schemaReadFile = (`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"file to read, relative to the working directory or absolute"},` +
		`"offset":{"type":"integer","minimum":0,"description":"first line to read, from 0"},` +
		`"limit":{"type":"integer","minimum":1,"description":"most lines to read"}},` +
		`"required":["path"],"additionalProperties":false}`)
	schemaListFiles = (`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"directory to list; default the working directory"},` +
		`"glob":{"type":"string","description":"only names matching this glob"}},` +
		`"additionalProperties":false}`)
	schemaSearchText = (`{"type":"object","properties":{` +
		`"pattern":{"type":"string","description":"regular expression to search for"},` +
		`"path":{"type":"string","description":"file or directory to search; default the working directory"},` +
		`"glob":{"type":"string","description":"only files matching this glob"}},` +
		`"required":["pattern"],"additionalProperties":false}`)
	schemaGetDiagnostics = (`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"file or package to check; default the working directory"}},` +
		`"additionalProperties":false}`)
	schemaWriteFile = (`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"file to write"},` +
		`"content":{"type":"string","description":"the whole new content"}},` +
		`"required":["path","content"],"additionalProperties":false}`)
	schemaApplyPatch = (`{"type":"object","properties":{` +
		`"patch":{"type":"string","description":"a unified diff"}},` +
		`"required":["patch"],"additionalProperties":false}`)
	schemaShell = (`{"type":"object","properties":{` +
		`"command":{"type":"string","description":"a bash command"},` +
		`"cwd":{"type":"string","description":"working directory; default the session's"},` +
		`"timeoutMs":{"type":"integer","minimum":1}},` +
		`"required":["command"],"additionalProperties":false}`)
	schemaRunTests = (`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"package or directory to test; default the working directory"}},` +
		`"additionalProperties":false}`)
	schemaHTTPGet = (`{"type":"object","properties":{` +
		`"url":{"type":"string","format":"uri"},` +
		`"headers":{"type":"object","additionalProperties":{"type":"string"}}},` +
		`"required":["url"],"additionalProperties":false}`)
	schemaHTTPPost = (`{"type":"object","properties":{` +
		`"url":{"type":"string","format":"uri"},` +
		`"body":{"type":"string"},` +
		`"headers":{"type":"object","additionalProperties":{"type":"string"}}},` +
		`"required":["url","body"],"additionalProperties":false}`)
)
