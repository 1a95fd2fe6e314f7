package permission

// PathsToResolve returns the absolute paths the engine will judge for req,
// in order and without duplicates: path arguments, a shell command's working
// directory and the files it touches, a patch's targets. A path written with
// ".." is returned uncleaned ("/p/link/../x"), because the kernel resolves
// the link before the ".."; the caller must resolve it physically (as
// filepath.EvalSymlinks does). The caller puts each result in req.Resolved
// under the returned key before calling Check. It is pure, like Check.
func PathsToResolve(req Request) []string {
	var j judge
	j.run(req)
	var out []string
	seen := make(map[string]bool, len(j.paths))
	for _, p := range j.paths {
		k := p.key()
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}
