// `tune-daemon token ...`: manages client tokens in a tuning log directly, without a running
// daemon (the first admin token comes from here; a running daemon sees the change within a
// second).
//
//   tune-daemon token create --db F --name NAME --role read|submit|admin|worker
//       prints the token's text (shown once) on stdout
//   tune-daemon token list --db F
//   tune-daemon token revoke --db F ID
//
// Exit codes: 0 done, 1 the log cannot be opened or written, 2 bad flags (a bad role or name
// among them), 3 revoke of an unknown id.
#pragma once

namespace tune::tuner {

/// argv[0] is "token".
int TokenAdminMain(int argc, char** argv);

}  // namespace tune::tuner
