// An agent's name (seed 003's pattern): it appears in URLs, in tool names and in messages about the definition, so
// both the definition's schema and the wording of its errors read it from here.
export const AGENT_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
