package permission

// PathsToResolve returns the canonical absolute paths the engine will judge
// for req, in order and without duplicates: path arguments, a shell
// command's working directory and the files it touches, a patch's targets.
// The caller resolves their symbolic links and puts the results in
// req.Resolved before calling Check. It is pure, like Check.
func PathsToResolve(req Request) []string {
	var j judge
	j.run(req)
	var out []string
	seen := make(map[string]bool, len(j.paths))
	for _, p := range j.paths {
		if p.canon == "" || seen[p.canon] {
			continue
		}
		seen[p.canon] = true
		out = append(out, p.canon)
	}
	return out
}
