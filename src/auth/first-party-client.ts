/**
 * The OAuth client id of the `switchyard` CLI, the one first-party client. It exists
 * without a row in oauth_clients, and a registered client's id is a server-made `brc_…`,
 * so no registration can take it: a grant issued to this id is a person's own sign-in
 * through the CLI (docs/api/credentials.md "Keys people make are the account's").
 */
export const FIRST_PARTY_CLIENT_ID = "switchyard-cli";
