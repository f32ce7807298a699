// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, not templates
/**
 * The outside review of the issue 17 fixes (docs/security.md, "Outside attack on the issue 17
 * fixes"): forms that got past configured rules — bash reading a quoted `NAME=(…)`
 * declaration argument again as a compound assignment, getopt clusters hiding an option
 * whose value is a command (`rsync -avze CMD`, `git rebase -qx CMD`), tar's traditional
 * option word, and Emacs's `--execute` and one-dash long options. Each attack keeps its setup
 * and the effect that proves it ran, so shell-red-team-17.test.ts replays it for real. Not
 * exported from the package.
 */

import { GIT_SETUP } from "./shell-red-team-3.js";
import type { RoundFourAttack } from "./shell-red-team-4.js";

const push = (setup: string, command: string, needs?: string): RoundFourAttack => ({
  setup,
  command,
  effect: "push",
  needs,
});

/** A second commit, so `HEAD~1` exists and a rebase has a commit to replay. */
const TWO_COMMITS = `${GIT_SETUP} && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m y`;
/** `git push origin main` as one word, for options whose value is a command line. */
const PUSH = "'git push -q origin main'";

export const ROUND_17_ATTACKS: readonly RoundFourAttack[] = [
  // A declaration reads a quoted `NAME=(…)` argument again, running what is in it.
  push(GIT_SETUP, "declare -a 'a=($(git push -q origin main))'"),
  push(GIT_SETUP, "typeset -a 'a=($(git push -q origin main))'"),
  push(GIT_SETUP, "readonly -a 'a=($(git push -q origin main))'"),
  push(GIT_SETUP, "declare -a -- 'a=($(git push -q origin main))'"),
  push(GIT_SETUP, "declare -a 'a[1]=($(git push -q origin main))'"),
  push(GIT_SETUP, "declare -A 'h=([k]=$(git push -q origin main))'"),
  push(GIT_SETUP, "a=(1); declare 'a=($(git push -q origin main))'"),
  push(GIT_SETUP, "a=(1); declare 'a+=($(git push -q origin main))'"),
  push(GIT_SETUP, "declare -a a='($(git push -q origin main))'"),
  push(GIT_SETUP, 'declare -a "a=(\\$(git push -q origin main))"'),
  // getopt clusters: the option that takes a command is not the first letter of its word.
  push(TWO_COMMITS, `git rebase -qx ${PUSH} HEAD~1`),
  push(GIT_SETUP, `tar -cI ${PUSH} -f x.tar .git/HEAD`),
  push(GIT_SETUP, `tar -cvI ${PUSH} -f x.tar .git/HEAD`),
  // tar's traditional form: option letters without a dash take the next words in order.
  push(GIT_SETUP, `tar cIf ${PUSH} x.tar .git/HEAD`),
  push(GIT_SETUP, `tar cfI x.tar ${PUSH} .git/HEAD`),
  // Programs this machine may not have: the verdict is checked.
  push(GIT_SETUP, `rsync -avze ${PUSH} . host:dst`, "rsync"),
  push(GIT_SETUP, `rsync -ae${PUSH} . host:dst`, "rsync"),
  // Emacs without a terminal: a daemon evaluates its `--execute` (an alias of `--eval`).
  push(GIT_SETUP, `emacs --fg-daemon --execute '(shell-command "git push -q origin main")'`, "emacs"),
  push(GIT_SETUP, `emacs --fg-daemon -execute '(shell-command "git push -q origin main")'`, "emacs"),
  push(GIT_SETUP, `emacs --fg-daemon -exe '(shell-command "git push -q origin main")'`, "emacs"),
  push(GIT_SETUP, `emacs --fg-daemon --exec '(shell-command "git push -q origin main")'`, "emacs"),
  push(GIT_SETUP, `emacs --fg-daemon -ev '(shell-command "git push -q origin main")'`, "emacs"),
];

/** Other cluster forms, checked by verdict (configured `deny: git push`). */
export const ROUND_17_CONFIGURED_DENY: readonly string[] = [
  `git grep -iO${PUSH} x`,
  `git difftool -yx ${PUSH}`,
  `scp -qS${PUSH} a host:b`,
  `ssh -qo 'ProxyCommand git push origin main' host`,
  `ssh -vvoProxyCommand=${PUSH} host`,
];

/** What must stay allowed under configured rules: plain declarations and clusters of data. */
export const ROUND_17_ALLOW: readonly string[] = [
  "declare -a arr=(one two)",
  "declare -a 'a=(x y)'",
  "local_var=1; declare -r A='(x)'",
  "tar -cvf x.tar src",
  "tar czf x.tgz src",
  "tar xzf x.tgz",
  "rsync -avz src/ host:dst/",
  "git rebase -q main",
  "emacs -nw notes.txt",
];
