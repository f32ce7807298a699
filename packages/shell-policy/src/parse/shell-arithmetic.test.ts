// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell text, not templates
import { describe, expect, it } from "vitest";
import { checkShellCommand } from "../policy/shell-policy.js";

// Code bash runs from arithmetic (round 4c of the red team). The attacks are replayed for
// real in shell-red-team-4.test.ts; here every verdict, and the look-alikes that must run.
const RULES = { deny: [{ prefix: ["git", "push"] }], ask: [{ prefix: ["rm", "-rf"] }] };
const C = "git push origin main";

const DENIED = [
  `(( 'a[$(${C})]' ))`,
  `echo $(( 'a[$(${C})]' ))`,
  `echo \${a['$(${C})']}`,
  `echo \${a['$(${C})']:-x}`,
  `echo \${#a['$(${C})']}`,
  `[[ 'a[$(${C})]' -eq 0 ]]`,
  `[[ -v 'a[$(${C})]' ]]`,
  `a=(1); unset 'a[$(${C})]'`,
  `a=(1); a['$(${C})']=2`,
  `a=(['$(${C})']=1)`,
  `a+=(['$(${C})']=2)`,
  `declare a['$(${C})']=3`,
  `a=('a[$(${C})]'); echo $((a))`,
  `a=([0]='a[$(${C})]'); (( a ))`,
  `declare -a a=('a[$(${C})]'); (( a ))`,
  `x=('a[$(${C})]'); [[ $x -eq 1 ]]`,
  `printf -v x '%s' 'a[$(${C})]'; echo $((x))`,
  `read x <<< 'a[$(${C})]'; echo $((x))`,
  `x=$(cat f); echo $((x))`,
  `mapfile -t a <<< 'b[$(${C})]'; (( a ))`,
  `set -- 'b[$(${C})]'; (( $1 ))`,
  `f(){ (( $1 )); }; f 'b[$(${C})]'`,
  `x='a['; y='$(${C})]'; (( $x$y ))`,
  `x=y; y=$(cat f); (( x ))`,
  "declare -i n; read n < f",
  "read n < f; echo ${s:n}",
  "for ((i=0; i<$(cat f); i++)); do :; done",
  "read -r x < f; [[ $x -gt 1 ]]",
  'x=$(cat f); [[ "$x" -eq 1 ]]',
  "echo $(( $(cat f) + 1 ))",
  `bash -c "(( 'a[\\$(${C})]' ))"`,
];

const ALLOWED = [
  "for i in 1 2 3; do echo $((i*2)); done",
  "echo $((RANDOM % 6))",
  "(( 1 + 2 ))",
  "n=5; echo $((n+1))",
  "count=0; count=$((count+1)); echo $count",
  "for ((i=0;i<3;i++)); do echo $i; done",
  "for ((i=0;i<3;i++)); do echo $(date); done",
  "[[ $# -gt 0 ]] && echo args",
  'n=3; [[ "$n" -eq 3 ]] && echo ok',
  "a=(x y z); echo ${a[1]} ${#a[@]}",
  "x=hello; echo ${x:1:3}",
  "x=$(date +%s); echo ${x:0:4}",
  'if [ "$(id -u)" -eq 0 ]; then echo root; fi',
  "awk '{print $(NF-1)}' f",
  "grep -n '\\$(' Makefile",
  "let i=1+2",
  "unset x",
  "echo $((16#ff))",
];

describe("code bash runs from arithmetic is refused", () => {
  it.each(DENIED)("%s", async (command) => {
    const d = await checkShellCommand(command, RULES);
    expect(d.decision, JSON.stringify(d)).toBe("deny");
  });
});

describe("ordinary arithmetic still runs", () => {
  it.each(ALLOWED)("%s", async (command) => {
    const d = await checkShellCommand(command, RULES);
    expect(d, command).toEqual({ decision: "allow" });
  });
});

describe("an opener inside arithmetic keeps its own hint", () => {
  it("(( $(xdg-open u) )) is denied as the opener it is", async () => {
    const d = await checkShellCommand("(( $(xdg-open https://example.com) ))");
    expect(d.rule).toBe("gui.xdg-open");
    expect(d.reason).toContain("browser_panel.open");
  });
});
