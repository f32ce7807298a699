// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, not templates
/**
 * Issue 17, part 4: configured deny rules bypassed by programs and options that run their
 * arguments, their standard input or a config value as commands or code. The seven forms
 * the review replayed (each really pushed or deleted) and further forms of the same
 * classes, each with its setup and the effect that proves it ran, for
 * issue-17-forms.test.ts to replay under bash; verdict-only forms where this machine lacks
 * the program or the effect needs a server; and the ordinary commands those classes must
 * not catch. (psql's `\!` needs a PostgreSQL server: tests/e2e/src/hook-rules.test.ts.)
 */
import { GIT_SETUP } from "./shell-red-team-3.js";
import type { RoundFourAttack } from "./shell-red-team-4.js";

/** The review's rule set. */
export const REVIEW_RULES = {
  deny: [{ prefix: ["git", "push"] }, { prefix: ["rm", "-rf"] }, { prefix: ["curl"] }],
};

const push = (setup: string, command: string, needs?: string): RoundFourAttack => ({
  setup,
  command,
  effect: "push",
  needs,
});
const del = (setup: string, command: string, needs?: string): RoundFourAttack => ({
  setup,
  command,
  effect: "delete",
  needs,
});

/** GIT_SETUP with origin's absolute path (filter-branch and submodules run commands elsewhere) and an identity. */
const GIT_ABS = `${GIT_SETUP} && git remote set-url origin "$PWD/remote.git" && git config user.name t && git config user.email t@t`;
/** A repository whose submodule `sub` was cloned from remote.git (which has `seed`, not `main`). */
const SUBMODULE_SETUP = `${GIT_ABS} && git push -q origin HEAD:seed && git -c protocol.file.allow=always submodule add -q -b seed "$PWD/remote.git" sub && git -C sub config protocol.file.allow always`;
/** A hooks directory whose pre-commit hook pushes. */
const HOOKS_SETUP = `${GIT_ABS} && mkdir h && printf '#!/bin/sh\\ngit push -q origin main\\n' > h/pre-commit && chmod +x h/pre-commit`;
/** Three commits, so that `bisect run` has one to test between good and bad. */
const BISECT_SETUP = `${GIT_ABS} && git commit -q --allow-empty -m 2 && git commit -q --allow-empty -m 3`;
const VICTIM = "mkdir -p victim/sub && echo x > f";
/** filter-branch waits ten seconds after its warning unless told not to. */
const FB = "FILTER_BRANCH_SQUELCH_WARNING=1 git filter-branch -f";

export const ISSUE_17_ATTACKS: readonly RoundFourAttack[] = [
  // The review's seven (psql is replayed in tests/e2e, against a real server).
  push(SUBMODULE_SETUP, "git submodule foreach 'git push origin HEAD:main'"),
  push(GIT_ABS, `${FB} --tree-filter 'git push origin main; true' HEAD`),
  push(GIT_SETUP, "git -c trailer.x.command='git push origin main' interpret-trailers --trailer x=y"),
  push(GIT_SETUP, "cmake -E chdir . sh -c 'git push origin main'", "cmake"),
  push(GIT_SETUP, 'node -e \'`${require("child_process").execSync("git push origin main")}`\''),
  push(`${GIT_SETUP} && touch f`, "ed -s f <<< '!git push origin main'", "ed"),
  // Subcommands whose argument is a command.
  push(SUBMODULE_SETUP, "git submodule --quiet foreach --recursive 'git push origin HEAD:main'"),
  push(SUBMODULE_SETUP, "git submodule foreach git push origin HEAD:main"),
  push(GIT_ABS, `${FB} --msg-filter 'git push origin main; cat' HEAD`),
  push(GIT_ABS, `${FB} --env-filter 'git push origin main' HEAD`),
  push(GIT_ABS, `${FB} --index-filter 'git push origin main' HEAD`),
  push(GIT_ABS, `${FB} --commit-filter 'git push origin main; git commit-tree "$@"' HEAD`),
  push(GIT_ABS, `${FB} --setup 'git push origin main' HEAD`),
  push(BISECT_SETUP, "git bisect start HEAD HEAD~2 && git bisect run git push origin main"),
  push(BISECT_SETUP, "git bisect start HEAD HEAD~2 && git bisect run sh -c 'git push origin main'"),
  // Config values that are commands, set on the command line or written for later.
  push(GIT_SETUP, "git -c trailer.x.cmd='git push origin main #' interpret-trailers --trailer x=y"),
  push(HOOKS_SETUP, "git -c core.hooksPath=h commit -q --allow-empty -m y"),
  push(
    HOOKS_SETUP,
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=h git commit -q --allow-empty -m y",
  ),
  push(HOOKS_SETUP, "git config core.hooksPath h && git commit -q --allow-empty -m y"),
  push(GIT_SETUP, "git config alias.p '!git push origin main' && git p"),
  push(GIT_SETUP, "git config alias.p push && git p origin main"),
  push(GIT_SETUP, "git config --add alias.p push && git p origin main"),
  push(GIT_SETUP, "git -c core.fsmonitor='git push origin main; false' status"),
  // Programs that run their input or arguments.
  push(`${GIT_SETUP} && touch f`, "ed -s f <<< '!git push -q origin main'", "ed"),
  push(`${GIT_SETUP} && touch f`, "printf '%s\\n' '!git push origin main' q | ed -s f", "ed"),
  push(`${GIT_SETUP} && touch f`, "ex -s f <<< '!git push origin main'", "ex"),
  push(`${GIT_SETUP} && touch f`, "vim -es -c '!git push origin main' -c q f", "vim"),
  push(`${GIT_SETUP} && echo x > f`, "sed -n '1e git push origin main' f"),
  push(`${GIT_SETUP} && echo x > f`, "sed 's/x/git push origin main/e' f"),
  push(`${GIT_SETUP} && echo x > f`, "sed -n -f /dev/stdin f <<< '1e git push origin main'"),
  push(GIT_SETUP, "cmake -E chdir . git push origin main", "cmake"),
  push(GIT_SETUP, "cmake -E chdir . bash -c 'g=git; $g push origin main'", "cmake"),
  push(GIT_SETUP, 'node -e \'const c=require("child_process"); `${c.execSync("git push origin main")}`\''),
  push(GIT_SETUP, 'node -p \'`${require("child_process").execSync("git push origin main")}`\''),
  push(GIT_SETUP, `python3 -c "import os; f'{os.system(chr(103)+\\"it push origin main\\")}'"`),
  push(GIT_SETUP, 'perl -e \'$c="git"; system("$c push origin main")\''),
  del(VICTIM, "ed -s f <<< '!rm -rf victim'", "ed"),
  del(VICTIM, "sed -n '1e rm -rf victim' f <<< x"),
  del(VICTIM, 'node -e \'require("fs").rmSync("victim", {recursive: true})\''),
];

/**
 * Further forms of each class, judged without a replay (the program is missing here, needs
 * a server or another host, or the effect is not a push): under the review's rules each is
 * denied or asked, never allowed.
 */
export const ISSUE_17_REFUSED: readonly string[] = [
  // Interpreter code.
  "python3 -c 'import os; os.system(\"git push origin main\")'",
  'python3 -c \'import subprocess as s; s.run(["gi"+"t", "push"])\'',
  "python3 -m timeit -s 'import os' 'os.system(\"git push\")'",
  "python3 -m pdb -c continue x.py",
  "python3 - <<'EOF'\nimport os\nos.system('git push')\nEOF",
  "ruby -e 'system(%w[git push].join(\" \"))'",
  'php -r \'passthru("gi"."t push");\'',
  "lua -e 'os.execute(\"git push\")'",
  "Rscript -e 'system(\"git push\")'",
  'node --eval \'require("child_process").execSync(`git ${"push"}`)\'',
  'node --import \'data:text/javascript,import cp from "child_process"; cp.execSync("git push")\' x.js',
  "node -r data:x x.js",
  "node < x.js",
  "tsx -e 'console.log(1)'",
  'deno eval \'new Deno.Command("git", {args: ["push"]}).outputSync()\'',
  'bun -e \'Bun.spawnSync(["git", "push"])\'',
  "perl -MO=Deparse,-x x.pl",
  "perl -M'strict;system q(git push)' -e 1",
  "awk 'BEGIN { \"git push\" | getline }'",
  "awk 'BEGIN { print | \"sh\" }' <<< 'git push'",
  "awk '@load \"filefuncs\"; BEGIN {}'",
  "awk -f /dev/stdin <<< 'BEGIN{system(\"git push\")}'",
  "pwsh -c 'git push'",
  "osascript -e 'do shell script \"git push\"'",
  "julia -e 'run(`git push`)'",
  "jshell <<< 'Runtime.getRuntime().exec(\"git push\")'",
  // Programs that run their arguments or input.
  "dc -e '!git push origin main'",
  "echo '!git push origin main' | dc",
  "m4 <<< 'syscmd(git push origin main)'",
  "red -s f <<< '!git push'",
  "vi -c ':!git push' f",
  "nvim --headless -c '!git push' -c q",
  "mysql -e '\\! git push origin main'",
  "mariadb -e 'system git push'",
  "sqlite3 db \"select edit('x', 'git push')\"",
  "duckdb -c '.shell git push'",
  "nc -e /bin/sh 127.0.0.1 9",
  "ncat --sh-exec 'git push' -l 9999",
  "socat - EXEC:'sh -c \"git push\"'",
  "crontab - <<< '* * * * * git push'",
  "sftp -b - host <<< '!git push'",
  "ftp <<< '!git push'",
  "gdb < cmds",
  "lldb -o 'script import os; os.system(\"git push\")'",
  "sed -f - f <<< 'e git push'",
  "sed 's/x/y/;1e git push' f",
  "sed '0~1e git push' f",
  "sed '1,2!e git push' f",
  "sed 's|a|b|ge' f",
  "echo 'e git push' | xargs sed",
  // Options and subcommands whose value is a command.
  "git -c core.pager='git push origin main' log",
  "git -c core.hooksPath=.hooks commit -m x",
  "git -c core.sshCommand='sh -c \"git push\"' fetch",
  "git -c include.path=x.cfg status",
  "git -c filter.x.smudge='git push' checkout .",
  "git -c diff.x.textconv='git push' diff",
  "git -c credential.helper='!git push' fetch",
  "git -c sequence.editor='git push' rebase -i HEAD~1",
  "git -c alias.x='!git push' x",
  "git -c protocol.allow=always -c 'url.ext::sh -c x #.insteadOf=https://h/' fetch https://h/r",
  "git -c protocol.allow=always fetch origin",
  "GIT_ALLOW_PROTOCOL=ext GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=ext::curl git fetch origin",
  "git -c alias.s=push s origin main",
  "git config --global core.editor 'sh -c \"git push\"'",
  "git config set core.sshCommand 'git push'",
  "git config --file .git/config include.path evil.cfg",
  "git config --rename-section foo alias",
  "git send-email --to-cmd='git push' x.patch",
  "git send-email --sendmail-cmd=./x x.patch",
  "git clone -c core.hooksPath=h src dst",
  "git --exec-path=. push",
  "git p origin main",
  "git st",
  "git merge-index ./prog -a",
  "GIT_CONFIG_PARAMETERS=\"'core.pager=git push'\" git log",
  "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=include.path GIT_CONFIG_VALUE_0=x git status",
  "tar --to-command='git push' -xf a.tar",
  "tar --rsh-command='sh -c x' -cf h:x .",
  "rsync -e 'sh -c \"git push\"' a b:c",
  "npm --script-shell=./x test",
  "npm config set script-shell ./x",
  "npm init evil",
  "npm explore pkg -- git push",
  "cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"./x\"' run",
  "go test -exec ./x ./...",
  "go env -w GOFLAGS=-toolexec=./x",
  "rg --pre ./x foo",
  "wget --use-askpass=./x https://example.com",
  "ssh localhost 'git push origin main'",
  "java -XX:OnError='git push' -jar x.jar",
  "make CC='sh -c \"git push\"' all",
  "cc -wrapper sh,-c,x x.c",
  "cmake -DCMAKE_C_COMPILER_LAUNCHER=./x .",
  "gh alias set p '!git push'",
  "gh config set editor ./x",
  "EDITOR_CMD='sh -c x' sometool",
  // Launchers.
  "docker run img sh -c 'git push'",
  "docker exec c git status",
  "docker compose run app ./x",
  "kubectl exec pod -- ./x",
  "pnpm bash -c 'git push origin main'",
  "pnpm python3 -c 'print(1)'",
  "yarn node -e 'console.log(1)'",
  "nodemon --exec './x'",
  "watchexec './x'",
  "concurrently './x'",
  "cross-env A=1 ./x",
  "direnv exec . ./x",
  "rustup run stable ./x",
  "uv tool run x",
  "poetry shell",
  "busybox sh -c 'git push'",
  "someunknowntool --run 'git push origin main'",
  "/opt/bin/tool -c 'x'",
];

/** Ordinary commands of the same programs that capgate reads completely: allowed under the rules. */
export const ISSUE_17_READABLE: readonly string[] = [
  "git status && git diff --stat && git log --oneline -10",
  "git submodule update --init --recursive",
  "git submodule foreach 'git status --short'",
  "git -c user.name=ci -c user.email=ci@example.com commit -m 'release notes'",
  "git -c color.ui=always log -p",
  "git -c core.pager=cat log",
  "git -c trailer.sign.cmd='echo signed' interpret-trailers --trailer sign=x",
  "git config user.email dev@example.com",
  "git config --get remote.origin.url",
  "git config --list",
  "git filter-branch -f --msg-filter 'sed s/foo/bar/' HEAD",
  "git bisect run npm test",
  "git rebase -x 'npm test' HEAD~3",
  "GIT_AUTHOR_NAME='A B' GIT_AUTHOR_DATE='2020-01-01 10:00' git commit -m x",
  "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON",
  "cmake --build build -j4",
  "cmake -E chdir build make -j4 || cmake -E make_directory out",
  "cmake -E copy a b",
  "sed -i.bak -e 's/a/b/g' -e '/^#/d' f.txt",
  "sed -n '1,20p' f",
  "sed '/start/,/end/{s/x/y/;p}' f",
  "sed 'y/abc/xyz/' f",
  "sed -E 's/(e+)/\\1/gI' f",
  "awk -F, '{ sum += $2 } END { print sum }' data.csv",
  "awk 'NR > 1 && $3 != \"\" { print $1 }' f",
  "python3 -m pytest -q tests/",
  "python3 -m pip install -r requirements.txt",
  "python3 manage.py migrate",
  "node --test ./test/",
  "node dist/index.js --port 3000",
  "npm ci && npm run build && npm test -- --watch=false",
  "pnpm install --frozen-lockfile && pnpm -r build && pnpm lint",
  "yarn add -D typescript",
  "./gradlew test",
  "bin/dev --verbose",
  "make -j4 V=1 PREFIX=/usr/local",
  "cargo test --workspace && cargo clippy -- -D warnings",
  "go test ./... && go vet ./...",
  "docker build -t app . && docker ps -a",
  "kubectl get pods -n prod",
  "gh pr create --title x --body y",
  "ssh -T git@example.com",
  "find . -name '*.log' -mtime +7 -delete",
  "ls | xargs wc -l",
  "git ls-files -m | xargs git add --",
  "tar czf out.tar.gz src/",
  "export NODE_ENV=production; npm start",
  "msg='hello world'; echo \"$msg\"",
];
