// The credentials the emulator accepts on the endpoints whose auth it checks (a Claude OAuth token, a Foundry key,
// AWS keys for Bedrock's SigV4; Vertex's service account is made at start, see google-token.ts). Test values only:
// vitest.config.ts gives them to the test Worker as secrets, and the emulator refuses anything else the way the
// real endpoint does, so a test can send a wrong one and see the run's authentication error.
export const TEST_OAUTH_TOKEN = "sk-ant-oat01-emulator-test-token";
export const TEST_FOUNDRY_KEY = "emulator-test-foundry-key";
export const TEST_AWS_ACCESS_KEY_ID = "AKIAEMULATORTEST0001";
export const TEST_AWS_SECRET_ACCESS_KEY = "emulator+test/secret/access/key/0001";
/** A value no endpoint accepts: a test's wrong credential. */
export const TEST_WRONG_SECRET = "not-the-right-credential";
