package permission

// EngineVersion is the version of the decision logic: Check given the same
// Request decides the same in every build of one version. Bump it whenever
// a change makes some Request decide otherwise (a new finding, a changed
// table, another step), so that a replay of a recorded session (package
// replay) can say that the engine, not the policy, changed a decision.
// Decisions are recorded with their facts since version 1. Version 2:
// under a taint, calls of MCP servers are asked at read risk too, and a
// non-file resource URI is a finding.
const EngineVersion = 2
