// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, not templates
/**
 * Forms for test/everyday-forms.test.ts: what lowering the false-ask rate must keep refused
 * (each replayed for real where it has an effect), and the everyday commands it must let run.
 */
import { GIT_SETUP } from "./shell-red-team-3.js";
import type { RoundFourAttack } from "./shell-red-team-4.js";

const push = (setup: string, command: string, needs?: string): RoundFourAttack => ({
  setup,
  command,
  effect: "push",
  needs,
});

const JS_PUSH = "require('child_process').execSync('git push -q origin main')";
const PY_PUSH = "import os; os.system('git push -q origin main')";
const JS_FILE = `${GIT_SETUP} && echo "${JS_PUSH}" > x.js`;
const PY_FILE = `${GIT_SETUP} && echo "${PY_PUSH}" > x.py`;
const SH_FILE = `${GIT_SETUP} && echo 'git push -q origin main' > s`;

/**
 * An interpreter or shell reading its program from standard input that the command line
 * gives it through a construct around the command: a group's or loop's redirection, a pipe
 * into a group, `exec <`, a function called with a redirection, a descriptor duplicated,
 * `0<` (which the grammar reads as an argument `0`), a shell or eval handed the pipe.
 */
export const STDIN_ATTACKS: readonly RoundFourAttack[] = [
  push(GIT_SETUP, `echo "${JS_PUSH}" | { node; }`),
  push(JS_FILE, "(node) < x.js"),
  push(JS_FILE, "{ node; } < x.js"),
  push(JS_FILE, "exec < x.js; node"),
  push(JS_FILE, "eval 'exec < x.js'; node"),
  push(JS_FILE, "f() { node; }; f < x.js"),
  push(JS_FILE, "cat x.js | while true; do node; break; done"),
  push(JS_FILE, "node 3< x.js <&3"),
  push(JS_FILE, "node 0< x.js"),
  push(GIT_SETUP, `echo "${JS_PUSH}" | bash -c node`),
  push(GIT_SETUP, `echo "${JS_PUSH}" | eval node`),
  push(GIT_SETUP, `cat <<'EOF' | node\n${JS_PUSH}\nEOF`),
  push(PY_FILE, "{ python3; } < x.py"),
  push(PY_FILE, "cat x.py | (python3)"),
  push(SH_FILE, "bash 0< s"),
  push(SH_FILE, "cat s | sh 0<&0"),
];

/** A configured `git push` rule: a run-time word where the subcommand goes still matches. */
export const GIT_RUNTIME_ATTACKS: readonly RoundFourAttack[] = [
  push(GIT_SETUP, 'v=push; git "$v" origin main'),
  push(GIT_SETUP, "git $(echo push) origin main"),
  push(GIT_SETUP, 'set -- push origin main; git "$@"'),
  push(GIT_SETUP, 'a=(-C . push); git "${a[@]}" origin main'),
  push(GIT_SETUP, "d='. push'; git -C $d origin main"),
  push(GIT_SETUP, 'kv=alias.p=push; git -c "$kv" p origin main'),
];

/**
 * Run-time words inside an argument of a subcommand that is not `push` — the commit message
 * Claude Code writes through a here-document above all — are not `git push`.
 */
export const GIT_RUNTIME_READABLE: readonly string[] = [
  "git commit -m \"$(cat <<'EOF'\nfix: keep the cache warm\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
  'git commit -m "$msg"',
  'git log --format="$fmt" -n 3',
  'git -C "$dir" status --short',
  'git add "$file"',
  'git checkout -b "$branch"',
  'git diff "$base"...HEAD',
];

/** Python that prints its version or help exits before any code runs: replayed, nothing is pushed. */
export const PYTHON_VERSION_FORMS: readonly string[] = [
  "python3 --version",
  "python3 -V",
  "python3 -VV",
  "python3 --help",
  "python3 -h",
  `python3 -V -c "${PY_PUSH}"`,
  `python3 -h -c "${PY_PUSH}"`,
  `python3 --version -c "${PY_PUSH}"`,
];

/** A bare interpreter with the input it inherited reads what the operator types (capgate gives it /dev/null). */
export const BARE_INTERPRETERS: readonly string[] = ["python3", "python3 -u", "node"];

/** Still refused: Python's program from a pipe, a file, `-`, or code before `-V`. */
export const PYTHON_STILL_REFUSED: readonly string[] = [
  "echo 'print(1)' | python3",
  "python3 < x.py",
  "python3 - < x.py",
  "python3 -c 'print(1)' -V",
];

/** The new data programs' readers: the part that runs something is asked about. */
export const DATA_READER_ASKS: readonly (readonly [string, RegExp])[] = [
  ["sudo apt-get -o APT::Update::Pre-Invoke::='git push' update", /Pre-Invoke|configuration/],
  ["apt -o Dpkg::Options::=--pre-invoke=x install tmux", /configuration/],
  ["apt-get -c ./apt.conf update", /-c reads configuration/],
  ["dpkg --pre-invoke='git push' -i x.deb", /dpkg --pre-invoke runs a shell command/],
  ["brew sh", /`brew sh` is not a brew command/],
  ["brew bundle exec rake", /`brew bundle`/],
  ["snap pack ./dir", /`snap pack` is not a snap command/],
  ["composer exec phpunit", /composer exec/],
  ["bundle exec rake test", /bundle exec/],
  ["rails runner 'User.delete_all'", /rails runner/],
  ["flask shell", /flask shell/],
  ["jupyter console", /`jupyter console`/],
  ["dotnet exec app.dll", /dotnet exec/],
  ["helm install r ./chart --post-renderer ./render", /--post-renderer/],
  ["bat --pager 'sh -c x' f", /bat --pager/],
  ["fd -e ts -x rm", /fd -x/],
  ["fd -tf -X rm", /fd -x/],
  ["ag --pager 'sh -c x' foo", /ag --pager/],
  ["wl-paste -w sh -c x", /wl-paste --watch/],
  ["patch -p1 < fix.diff", /`patch` is not a program capgate knows/],
];

/** Everyday commands of the new data programs: read completely. */
export const DATA_READABLE: readonly string[] = [
  "sudo apt install tmux",
  "sudo apt-get -y -o Dpkg::Options::=--force-confold upgrade",
  "apt-cache policy git",
  "dpkg -l | grep ssl",
  "brew install jq && brew list",
  "snap list",
  "composer install && composer require monolog/monolog",
  "bundle install --jobs 4",
  "rails g migration AddX x:integer && rails db:migrate",
  "flask --app hello run",
  "jupyter notebook",
  "dotnet build && dotnet test",
  "helm -n web upgrade r ./chart",
  "bat src/index.ts",
  "fd -e ts src",
  "ag TODO src",
  "systemctl status nginx && journalctl -u nginx -n 50",
  "sudo pacman -Syu",
  "dmesg | tail && lsusb && lspci",
  "pstree -p | rev | head",
  "echo x | pbcopy && xclip -o",
  "sensors && xrandr --query",
];
