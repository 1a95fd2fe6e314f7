// Package policy is the PolicyStore of spec §7: the permission rules of the
// user, the project and the session, read from and written to policy files,
// and the list of projects the user trusts. Matching rules against calls is
// permission's job; this package finds, checks, combines and writes rules.
//
// Combining: among all matching rules of all levels deny beats ask beats
// allow, except that an untrusted project's allow rules do not count and its
// ask rules only tighten, so that a project can tighten but never loosen a
// decision until the user trusts it.
//
// Levels and files:
//   - user: $XDG_CONFIG_HOME/custom-agent/policy.json (default
//     ~/.config/custom-agent/policy.json);
//   - project: .custom-agent/policy.json, the nearest one from the working
//     directory up to the repository root (FindProject);
//   - session: rules in memory, made by "allow for this session" answers,
//     which the caller records as policy.changed events.
//
// Trust: a project file arrives with a repository that may be hostile.
// `custom-agent trust DIR` records the project's canonical root in
// $XDG_CONFIG_HOME/custom-agent/trusted.json; a rule the user adds to an
// untrusted project ("always allow in this project") is trusted on its own,
// by id and a digest of what it matches, and nothing else in the file is.
//
// Files are read strictly: a syntax error, an unknown field, an invalid
// rule, a missing or duplicate id, or an example the rule does not honour
// is an *Error naming the file, line and column, and Open fails: there is
// no fallback to "no rules".
//
// Why an untrusted project's ask rules only tighten: the engine lets a
// matching rule replace the default table, and the default for a
// credential call is deny, so an ask rule (`read_file ~/.ssh/** ask`) would
// turn a refusal into a question a tired user may answer yes to. Such a
// rule is marked permission.Rule.TightenOnly: the engine applies it only
// where ask is stricter than the decision without it (an allowed read
// becomes a question; a credential deny stays a deny).
package policy
