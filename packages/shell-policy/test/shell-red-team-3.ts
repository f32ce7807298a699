// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, not templates
/**
 * Issue 9, round three: the parser holes an outside red-team confirmed by effect (a marker
 * written, a push landed, a directory deleted). Each attack keeps its setup and the effect
 * that proves it ran, so shell-red-team-3.test.ts can replay it for real and require that
 * the policy refuses (or asks about) every form that really had its effect. Spread into
 * the corpus lists of shell-corpus.ts as well. Not exported from the package.
 */

export interface RedTeamAttack {
  /** What bash runs first to stage the attack (files named like options, a repository). */
  readonly setup: string;
  readonly command: string;
  /** `opener`: runs the fake xdg-open; `push`: updates the remote's main; `delete`: removes `victim`. */
  readonly effect: "opener" | "push" | "delete";
}

const open = (setup: string, command: string): RedTeamAttack => ({ setup, command, effect: "opener" });
const push = (setup: string, command: string): RedTeamAttack => ({ setup, command, effect: "push" });
const del = (setup: string, command: string): RedTeamAttack => ({ setup, command, effect: "delete" });

/** A work repository with one commit whose `origin` is a bare repository beside it. */
export const GIT_SETUP =
  "git init -q -b main remote.git --bare && git init -q -b main . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x && git remote add origin ./remote.git";

export const RED_TEAM_ATTACKS: readonly RedTeamAttack[] = [
  // 1. Brace expansion in argument words.
  open("", "bash {-c,} 'xdg-open u'"),
  open("", "sh {-c,} 'xdg-open u'"),
  open("", "bash -{c,} 'xdg-open u'"),
  open("", `python3 {-c,} 'import os; os.system("xdg-open u")'`),
  open("", `perl {-e,} 'system("xdg-open u")'`),
  open("", `node {-e,} 'require("child_process").execSync("xdg-open u")'`),
  open("touch f", "find f {-exec,} xdg-open x {} \\;"),
  open(GIT_SETUP, "git -c {'alias.x=!xdg-open u',} x"),
  open("", "x{dg-open,} u"),
  push(GIT_SETUP, "git {push,} origin main"),
  push(GIT_SETUP, "{git,push} origin main"),
  del("mkdir -p victim/sub", "rm {-rf,} victim"),
  del("mkdir -p victim/sub", "rm -{r,f} victim"),
  del("mkdir -p victim/sub", "rm {-f,#} -r victim"),
  del("mkdir -p victim/sub", "rm -f {-r,2}>/dev/null victim"),
  // 2. Unquoted globs that a file named like an option (or a subcommand) turns into one.
  open("touch ./-c", `python3 -[c] 'import os; os.system("xdg-open u")'`),
  open("touch ./-c", "bash -? 'xdg-open u'"),
  open("touch ./-c", "bash [-]c 'xdg-open u'"),
  open("touch ./-e", `perl -[e] 'system("xdg-open u")'`),
  open("touch ./-exec", "find . -maxdepth 0 -[e]xec xdg-open {} \\;"),
  push(`${GIT_SETUP} && touch push`, "git pus[h] origin main"),
  push(`${GIT_SETUP} && touch push`, "git pu?h origin main"),
  del("mkdir -p victim/sub && touch ./-rf", "rm -[r]f victim"),
  // 3. git's dashed programs and aliases defined in the environment.
  push(GIT_SETUP, "/usr/lib/git-core/git-push origin main"),
  push(GIT_SETUP, "git-push origin main"),
  push(GIT_SETUP, "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p origin main"),
  push(
    GIT_SETUP,
    "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push; git p origin main",
  ),
  push(
    GIT_SETUP,
    "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p origin main",
  ),
  push(GIT_SETUP, "GIT_CONFIG_PARAMETERS=\"'alias.p=push'\" git p origin main"),
  push(GIT_SETUP, "git send-pack ./remote.git main"),
  open(GIT_SETUP, "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!xdg-open u' git x"),
  open(GIT_SETUP, "GIT_CONFIG_PARAMETERS=\"'alias.x=!xdg-open u'\" git x"),
  // 4. Abbreviated long options of programs whose option value is a command.
  open("echo a > f && tar -cf x.tar f && rm f", "tar --to-com='xdg-open u' -xf x.tar"),
  open(
    "echo a > f && tar -cf x.tar f && rm f",
    "tar --checkpoint=1 --checkpoint-act=exec='xdg-open u' -xf x.tar",
  ),
  open("echo a > f", "tar --use-compress-prog=xdg-open -cf x.tar f"),
  open("", "make -f /dev/null --ev='all:; xdg-open u'"),
  open("echo a > f", "sed --expr='1e xdg-open u' f"),
  // 5. Options that run a command, and versioned interpreter names.
  open(GIT_SETUP, "git fetch --upload-pack='xdg-open u' origin"),
  open(GIT_SETUP, "git ls-remote --upload-pack='xdg-open u' origin"),
  open(GIT_SETUP, "git -c protocol.ext.allow=always ls-remote 'ext::sh -c xdg-open% u'"),
  open(
    `${GIT_SETUP} && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m y`,
    "git -c user.name=t -c user.email=t@t rebase -x 'xdg-open u' HEAD~1",
  ),
  open(`${GIT_SETUP} && echo a > f && git add f`, "git difftool -y -x xdg-open --cached"),
  open(`${GIT_SETUP} && echo foo > f && git add f`, "git grep --open-files-in-pager=xdg-open foo"),
  open("echo a > f", "split --filter='xdg-open u' f"),
  open("", `python3.11 -c 'import os; os.system("xdg-open u")'`),
  open("", `perl5.36.0 -e 'system("xdg-open u")'`),
  open("", "socat -u OPEN:/dev/null EXEC:'xdg-open u'"),
  open("", "setpriv xdg-open u"),
  open("", "capsh -- -c 'xdg-open u'"),
  open("", "cmake -E env FOO=1 xdg-open u"),
  // 6. Escapes inside interpreter string literals.
  open("", `python3 -c 'import os; os.system("\\x78dg-open u")'`),
  open("", `python3 -c 'import os; os.system("\\u0078dg-open u")'`),
  open("", `python3 -c 'import os; os.system("\\170dg-open u")'`),
  open("", `node -e 'require("child_process").execSync("\\u0078dg-open u")'`),
  open("", `node -e 'require("child_process").execSync("\\u{78}dg-open u")'`),
  open("", `perl -e 'system("\\x78dg-open u")'`),
  open("printf 'all:\\n\\txdg-open u\\n' > mk", "make -f - < mk"),
  open("", "sqlite3 :memory: '.shell xdg-open u'"),
];

/** The effect's own words for the test's messages. */
export const EFFECT_NAMES = { opener: "ran the opener", push: "pushed", delete: "deleted" } as const;

/** Forms of the red-team attacks that the corpus also lists without replaying them. */
export const RED_TEAM_DENY_OTHER: readonly string[] = [
  "bash {1..300}",
  "echo {a,b}{c,d}{1..100}",
  "git pus[h] origin main",
  "python3 *.py",
  "tar -[I] xdg-open -cf x.tar .",
  "git --config-e=core.pager=X log",
  "perf stat -e cycles xdg-open u",
  "git clone 'ext::sh -c xdg-open% u' x",
  "sqlite3 db '.once |xdg-open'",
  "printf 'all:\\n\\txdg-open u\\n' | make -f -",
];

/** Opener forms the corpus lists without replaying them (they need a large input or a manual page). */
export const RED_TEAM_DENY_OPENER: readonly string[] = [
  "sort --compress-prog=xdg-open big.txt",
  "man --pag=xdg-open ls",
  "man --htm=xdg-open ls",
  "git-web--browse u",
  "/usr/lib/git-core/git-instaweb",
  "git rebase --exe='xdg-open u' HEAD~1",
  "git archive --exec='xdg-open u' --remote=x HEAD",
  "git grep -Oxdg-open foo",
  "git difftool --extcmd=xdg-open HEAD",
  `node20 -e 'require("child_process").execSync("xdg-open u")'`,
  `lua5.4 -e 'os.execute("xdg-open u")'`,
  `tsx -e 'require("child_process").execSync("xdg-open u")'`,
  `ts-node -e 'require("child_process").execSync("xdg-open u")'`,
  "socat TCP-LISTEN:0 SYSTEM:'xdg-open u',pty",
  "sqlite3 -cmd '.system xdg-open u' db",
  "perf stat -- xdg-open u",
  "strace -o '|xdg-open u' true",
  "cmake -E time xdg-open u",
  "pwsh -c 'xdg-open u'",
];

/** Ordinary commands with braces and globs: still allowed, also under the configured rules. */
export const RED_TEAM_ALLOW: readonly string[] = [
  "ls *.txt",
  "cat src/*.ts",
  "git add src/*.ts",
  "echo {a,b}",
  "mkdir -p build/{src,test}",
  "cp config.json{,.bak}",
  "ls {src,test}/*.ts",
  "touch file{1..3}.txt",
  "tar --checkpoint=1 -cf x.tar .",
  "find src -name *.ts",
  "sed -i s/a/b/ *.txt",
  "git log @{u}..HEAD",
  "echo ${HOME}/{a,b}",
  "awk '{print $1}' f",
  "python3 script.py *.txt",
  "node build.js {a,b}",
  "git status",
  "git log --oneline -n 3",
  "rm -f *.log",
  "rm -r build/*",
  "git clean -xfd",
  "git cherry-pick -x abc123",
  "git rebase -i HEAD~3",
  "git fetch origin",
  "git grep -n foo",
  "git difftool HEAD",
  "node20 build.js",
  "tsx src/index.ts",
  "lua5.4 script.lua",
  "split -l 100 f part-",
  "git clone https://example.com/x.git",
  "socat - TCP:127.0.0.1:8080",
  "sqlite3 db 'select 1;'",
  "sqlite3 db .tables",
  "make -f Makefile test",
  "capsh --print",
  "cmake --build build",
  "perf stat -e cycles -- make",
  "strace -o out.txt ls",
  "setpriv --nnp make test",
  `python3 -c 'print("a\\tb\\n")'`,
  `node -e 'console.log("\\u00e9")'`,
];
