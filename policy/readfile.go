package policy

import "github.com/custom-agent/custom-agent/permission"

// ReadFile reads one policy file strictly, as Open reads the files of
// Options.Files (its examples judged in env), and returns its rules at
// level as the engine sees them. The file is trusted: the person named it.
// A replay's candidate policy is read with it.
func ReadFile(path string, level permission.RuleLevel, env Env) ([]permission.Rule, error) {
	fr, err := loadEntries(path, level, env, true)
	if err != nil {
		return nil, err
	}
	out := make([]permission.Rule, 0, len(fr.entries))
	for i := range fr.entries {
		if r, ok := fr.entries[i].Effective(); ok {
			out = append(out, r)
		}
	}
	return out, nil
}
