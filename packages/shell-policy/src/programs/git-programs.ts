/**
 * What a git command line makes run, and whether capgate can read all of it. git runs
 * commands named in many places: subcommands that take one (`submodule foreach`, the
 * filters of `filter-branch`, `bisect run`, `rebase --exec`), config values set on the
 * command line (`-c core.pager=…`, `-c trailer.x.command=…`, `git config alias.p '!…'`),
 * aliases and external `git-foo` programs standing where a subcommand goes. Rather than list
 * every such place, the readable part is an allow-list: the subcommands git itself ships
 * whose arguments are data, and the config keys known to hold data. Anything else is
 * "cannot be read completely" (docs/shell-policy.md §12).
 */

import { literalWord, type ShellWord } from "../parse/shell-words.js";
import type { Continuation, ResolvedCommand } from "./resolved-command.js";

/** git's global options that take the next word as their value. */
export const GIT_GLOBAL_VALUE =
  /^(-C|-c|--git-dir|--work-tree|--namespace|--config-env|--super-prefix|--list-cmds|--attr-source)$/;

/** Global options that take nothing and change nothing about what runs. */
const GIT_GLOBAL_FLAGS =
  /^(-p|--paginate|-P|--no-pager|--bare|--no-replace-objects|--no-lazy-fetch|--no-optional-locks|--no-advice|--literal-pathspecs|--glob-pathspecs|--noglob-pathspecs|--icase-pathspecs|--html-path|--man-path|--info-path|--exec-path|--version|-v|--help|-h)$/;

/** The subcommand of a git argv: the first word after the global options. */
export function gitSubcommand(args: readonly (string | undefined)[]): string | undefined {
  return args[gitSubcommandIndex(args)];
}

/** Where the subcommand stands in a git argv (args.length when there is none). */
export function gitSubcommandIndex(args: readonly (string | undefined)[]): number {
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (a === undefined) return i;
    if (GIT_GLOBAL_VALUE.test(a)) {
      i++;
      continue;
    }
    if (a === "--") return i + 1;
    if (!a.startsWith("-")) return i;
  }
  return args.length;
}

/** Keys whose value is a command line git runs (read as one); `alias.*` without `!` is a git command line. */
export const GIT_COMMAND_KEYS =
  /^(core\.(pager|editor|sshcommand|fsmonitor|askpass|gitproxy|hookspath)|alias\..+|diff\.external|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)|credential\.helper|credential\..+\.helper|sequence\.editor|gpg\.program|gpg\..+\.program|pager\..+|web\.browser|browser\..+\.(cmd|path)|man\..+\.(cmd|path)|merge\..+\.driver|mergetool\..+\.cmd|difftool\..+\.cmd|uploadpack\.packobjectshook|remote\..+\.(receivepack|uploadpack|proxy)|sendemail\..+|http\.proxy|include\.path|includeif\..+|trailer\..+\.(command|cmd))$/i;

/**
 * Keys whose value is read as a command line here and nothing else: the value of such a
 * key is checked when it is set, so setting it is readable. The other command keys name a
 * directory or file of programs (`core.hooksPath`, `include.path`) or a program git finds
 * by name (`credential.helper`), which the value alone does not show.
 */
const GIT_READ_COMMAND_KEYS =
  /^(core\.(pager|editor|sshcommand|askpass)|alias\..+|diff\.external|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)|sequence\.editor|gpg\.program|gpg\..+\.program|pager\..+|merge\..+\.driver|mergetool\..+\.cmd|difftool\..+\.cmd|trailer\..+\.(command|cmd))$/i;

/**
 * Config keys known to hold data (names, switches, paths of data files, URLs, refspecs),
 * never a program. Section and key names compare lower-cased, as git compares them.
 */
const GIT_DATA_KEYS: readonly RegExp[] = [
  /^(user|author|committer)\.(name|email|signingkey|useconfigonly)$/,
  /^core\.(autocrlf|eol|safecrlf|filemode|ignorecase|quotepath|symlinks|longpaths|precomposeunicode|abbrev|bare|logallrefupdates|whitespace|compression|loosecompression|packedgitlimit|packedgitwindowsize|bigfilethreshold|excludesfile|attributesfile|preloadindex|untrackedcache|splitindex|checkstat|trustctime|commentchar|commentstring|sparsecheckout|sparsecheckoutcone|repositoryformatversion|warnambiguousrefs|multipackindex|commitgraph|deltabasecachelimit|fsync|fsyncmethod|autocrlf|notesref|createobject|restrictinheritedhandles|unsetenvvars)$/,
  /^init\.(defaultbranch|defaultobjectformat|defaultrefformat)$/,
  /^(color|column|advice|log|format|status|gc|pack|index|feature|i18n|versionsort|maintenance|trace2|fsck|fetch\.fsck|receive\.fsck|splitindex|repack|rerere|transfer|ssh)\.[a-z0-9.-]+$/,
  /^pull\.(rebase|ff)$/,
  /^push\.(default|autosetupremote|followtags|recursesubmodules|usebitmaps|negotiate|pushoption|gpgsign|usebitmaps)$/,
  /^fetch\.(prune|prunetags|recursesubmodules|parallel|writecommitgraph|fsckobjects|negotiationalgorithm|showforcedupdates|output|unpacklimit|all|bundleuri)$/,
  /^merge\.(ff|conflictstyle|log|renames|renamelimit|directoryrenames|stat|autostash|verbosity|defaulttoupstream|verifysignatures|branchdesc)$/,
  /^rebase\.(autosquash|autostash|updaterefs|stat|abbreviatecommands|missingcommitscheck|rescheduledfailedexec|forkpoint|backend|rebasemerges|instructionformat)$/,
  /^diff\.(algorithm|renames|renamelimit|colormoved|colormovedws|mnemonicprefix|noprefix|relative|context|interhunkcontext|indentheuristic|submodule|statgraphwidth|statnamewidth|suppressblankempty|wserrorhighlight|ignoresubmodules|orderfile|dirstat|autorefreshindex|srcprefix|dstprefix)$/,
  /^branch\.(autosetupmerge|autosetuprebase|sort)$/,
  /^branch\.[^\n]+\.(remote|merge|rebase|pushremote|description)$/,
  /^remote\.[^\n]+\.(url|pushurl|fetch|push|mirror|skipdefaultupdate|skipfetchall|prune|prunetags|tagopt|promisor|partialclonefilter|followremotehead)$/,
  /^remote\.pushdefault$/,
  /^url\.[^\n]+\.(insteadof|pushinsteadof)$/,
  // Not `protocol.allow` nor `protocol.ext.allow`: `always` switches on the ext:: transport, whose URL is a command.
  /^protocol\.(version|(file|http|https|git|ssh)\.allow)$/,
  /^http\.(sslverify|postbuffer|lowspeedlimit|lowspeedtime|version|sslcainfo|sslcapath|sslcert|sslkey|sslcerttype|sslkeytype|extraheader|cookiefile|savecookies|followredirects|maxrequests|minsessions|useragent|emptyauth|delegation|sslbackend|schannelcheckrevoke|proactiveauth)$/,
  /^http\.[^\n]+\.(sslverify|extraheader|proxy?auth.*|useragent|sslcainfo|followredirects)$/,
  /^safe\.(directory|barerepository)$/,
  /^checkout\.(defaultremote|workers|thresholdforparallelism|guess)$/,
  /^clone\.(defaultremotename|rejectshallow|filtersubmodules)$/,
  /^submodule\.(recurse|fetchjobs|propagatebranches|alternatelocation|alternateerrorstrategy)$/,
  /^submodule\.[^\n]+\.(url|branch|ignore|shallow|fetchrecursesubmodules|active)$/,
  /^uploadpack\.(allowfilter|allowanysha1inwant|allowtipsha1inwant|allowreachablesha1inwant|allowrefinwant|hiderefs)$/,
  /^receive\.(denycurrentbranch|denynonfastforwards|denydeletes|denydeletecurrent|fsckobjects|unpacklimit|updateserverinfo|advertisepushoptions|hiderefs|autogc|shallowupdate|keepalive|maxinputsize)$/,
  /^grep\.(linenumber|column|patterntype|extendedregexp|fullname|fallbacktonoindex|threads)$/,
  /^blame\.(coloring|date|showemail|showroot|blankboundary|ignorerevsfile|markignoredlines|markunblamablelines)$/,
  /^tag\.(sort|forcesignannotated|gpgsign)$/,
  /^commit\.(gpgsign|verbose|status|cleanup|template)$/,
  /^help\.(format|autocorrect|htmlpath)$/,
  /^mailmap\.(file|blob)$/,
  /^notes\.(displayref|rewriteref|rewritemode)$/,
  /^notes\.rewrite\.[a-z]+$/,
  /^(reset\.quiet|worktree\.guessremote|interactive\.singlekey|credential\.(username|usehttppath|interactive))$/,
  /^stash\.(showpatch|showstat|showincludeuntracked)$/,
  /^am\.(keepcr|threeway|messageid)$/,
  /^apply\.(whitespace|ignorewhitespace)$/,
  /^gpg\.(format|minTrustLevel|ssh\.allowedsignersfile|ssh\.revocationfile)$/i,
];

/** Why a config key cannot be read as data, or undefined when it is known data. */
export function gitKeyUnreadable(key: string, value: string | undefined, via: string): string | undefined {
  const lower = key.toLowerCase();
  if (/ext::/i.test(key) || (value !== undefined && /ext::/i.test(value)))
    return `${via} sets \`${key}\` with an ext:: transport, whose text git runs as a command`;
  if (GIT_DATA_KEYS.some((re) => re.test(lower))) return undefined;
  if (GIT_READ_COMMAND_KEYS.test(lower)) return undefined;
  return `${via} sets the git config key \`${key}\`, which is not one capgate knows to hold data: its value may name a program git runs`;
}

/** Subcommands git ships whose arguments are data (their command-valued options are read in shell-program-options.ts or below). */
const GIT_DATA_SUBCOMMANDS = new Set([
  "add",
  "am",
  "annotate",
  "apply",
  "archive",
  "backfill",
  "bisect",
  "blame",
  "branch",
  "bundle",
  "cat-file",
  "check-attr",
  "check-ignore",
  "check-mailmap",
  "check-ref-format",
  "checkout",
  "checkout-index",
  "cherry",
  "cherry-pick",
  "clean",
  "clone",
  "column",
  "commit",
  "commit-graph",
  "commit-tree",
  "config",
  "count-objects",
  "credential",
  "describe",
  "diff",
  "diff-files",
  "diff-index",
  "diff-pairs",
  "diff-tree",
  "difftool",
  "fetch",
  "fetch-pack",
  "filter-branch",
  "for-each-ref",
  "for-each-repo",
  "format-patch",
  "fsck",
  "gc",
  "get-tar-commit-id",
  "grep",
  "hash-object",
  "help",
  "hook",
  "http-push",
  "index-pack",
  "init",
  "init-db",
  "interpret-trailers",
  "lfs",
  "log",
  "ls-files",
  "ls-remote",
  "ls-tree",
  "mailinfo",
  "mailsplit",
  "maintenance",
  "merge",
  "merge-base",
  "merge-file",
  "merge-tree",
  "mergetool",
  "mktag",
  "mktree",
  "multi-pack-index",
  "mv",
  "name-rev",
  "notes",
  "pack-objects",
  "pack-refs",
  "patch-id",
  "prune",
  "prune-packed",
  "pull",
  "push",
  "range-diff",
  "read-tree",
  "rebase",
  "reflog",
  "refs",
  "remote",
  "repack",
  "replace",
  "replay",
  "request-pull",
  "rerere",
  "reset",
  "restore",
  "rev-list",
  "rev-parse",
  "revert",
  "rm",
  "send-pack",
  "shortlog",
  "show",
  "show-branch",
  "show-index",
  "show-ref",
  "sparse-checkout",
  "stash",
  "status",
  "stripspace",
  "submodule",
  "switch",
  "symbolic-ref",
  "tag",
  "unpack-file",
  "unpack-objects",
  "update-index",
  "update-ref",
  "update-server-info",
  "var",
  "verify-commit",
  "verify-pack",
  "verify-tag",
  "version",
  "whatchanged",
  "worktree",
  "write-tree",
]);

/** Subcommands capgate knows run what their arguments say, with why. */
const GIT_RUNNING_SUBCOMMANDS: Readonly<Record<string, string>> = {
  "send-email":
    "git send-email runs programs named in its options and config (--to-cmd, --cc-cmd, --sendmail-cmd, --smtp-server=PATH)",
  "merge-index": "git merge-index runs the merge program named in its arguments",
  shell: "git shell runs the command given to it",
  daemon: "git daemon serves repositories and runs hooks for clients",
};

/** Options of `filter-branch` whose value is a shell script it evaluates; the others take a plain value. */
const FILTER_SCRIPTS =
  /^--(setup|env-filter|tree-filter|index-filter|parent-filter|msg-filter|commit-filter|tag-name-filter)$/;
const FILTER_VALUES = /^(--subdirectory-filter|--original|-d|--state-branch)$/;

/**
 * What a git subcommand itself runs: `submodule foreach CMD`, `filter-branch --*-filter
 * SCRIPT`, `bisect run CMD ARGS`, `for-each-repo … GIT-ARGS`, and `git config` writes of a
 * command key (the value as the command line git will run). Option values of other
 * subcommands (`rebase --exec`) are in PROGRAM_OPTIONS.
 */
export function gitSubcommandContinuations(cmd: ResolvedCommand): Continuation[] {
  const { words, argv } = cmd;
  const at = gitSubcommandIndex(argv);
  const sub = argv[at];
  const rest = words.slice(at + 1);
  switch (sub) {
    case "submodule": {
      const k = rest.findIndex((w) => w.value === "foreach");
      if (k === -1) return [];
      let args = rest.slice(k + 1);
      while (args[0]?.value === "--recursive") args = args.slice(1);
      return joined(args, "git submodule foreach");
    }
    case "filter-branch": {
      const out: Continuation[] = [];
      for (let i = 0; i < rest.length; i++) {
        const v = rest[i]!.value;
        if (v === undefined)
          return [
            { kind: "unresolvable", reason: "an argument of git filter-branch is only known at run time" },
          ];
        if (v === "--") break;
        const eq = v.indexOf("=");
        const name = eq === -1 ? v : v.slice(0, eq);
        if (FILTER_SCRIPTS.test(name)) {
          const script = eq === -1 ? rest[++i] : literalWord(v.slice(eq + 1));
          if (script?.value === undefined)
            return [
              {
                kind: "unresolvable",
                reason: `the git filter-branch ${name} script is only known at run time`,
              },
            ];
          out.push({ kind: "script", script: script.value, via: `git filter-branch ${name}` });
        } else if (FILTER_VALUES.test(name) && eq === -1) i++;
      }
      return out;
    }
    case "bisect":
      return rest[0]?.value === "run" && rest.length > 1 ? [{ kind: "command", words: rest.slice(1) }] : [];
    case "for-each-repo": {
      let i = 0;
      while (i < rest.length && rest[i]!.value?.startsWith("-") && rest[i]!.value !== "--") i++;
      if (rest[i]?.value === "--") i++;
      return i < rest.length ? [{ kind: "command", words: [literalWord("git"), ...rest.slice(i)] }] : [];
    }
    case "config": {
      const write = gitConfigWrite(rest);
      if (!write || !GIT_READ_COMMAND_KEYS.test(write.key.toLowerCase()) || write.value === undefined)
        return [];
      return configValue(write.key, write.value, "git config");
    }
  }
  return [];
}

/**
 * A config value that git will run: `!…` aliases as shell code, other aliases as a git
 * command line (and, as before, as a command line of their own: only more is denied), the
 * rest as a command line.
 */
export function configValue(key: string, value: string, via: string): Continuation[] {
  const at = `${via} ${key}`;
  if (/^alias\./i.test(key)) {
    return value.startsWith("!")
      ? [{ kind: "script", script: value.slice(1), via: at }]
      : [
          { kind: "script", script: `git ${value}`, via: at, soft: true },
          { kind: "script", script: value, via: at, soft: true },
        ];
  }
  return [{ kind: "script", script: value, via: at, soft: true }];
}

function joined(words: readonly ShellWord[], via: string): Continuation[] {
  if (words.length === 0) return [];
  const dynamic = words.find((w) => w.value === undefined);
  if (dynamic)
    return [
      { kind: "unresolvable", reason: `the command of ${via} \`${dynamic.raw}\` is only known at run time` },
    ];
  return [{ kind: "script", script: words.map((w) => w.value).join(" "), via }];
}

/** The key and value `git config` writes, or undefined when it only reads (or removes). */
export function gitConfigWrite(
  rest: readonly ShellWord[],
): { key: string; value: string | undefined; rename?: boolean } | undefined {
  const operands: (string | undefined)[] = [];
  let mode: "none" | "write" | "read" | "rename" = "none";
  let i = 0;
  const newStyle = rest[0]?.value;
  if (newStyle !== undefined && /^(list|get|set|unset|rename-section|remove-section|edit)$/.test(newStyle)) {
    mode = newStyle === "set" ? "write" : newStyle === "rename-section" ? "rename" : "read";
    i = 1;
  }
  for (; i < rest.length; i++) {
    const v = rest[i]!.value;
    if (v === undefined) {
      operands.push(undefined);
      continue;
    }
    if (v === "--") {
      operands.push(...rest.slice(i + 1).map((w) => w.value));
      break;
    }
    if (!v.startsWith("-") || v === "-") {
      operands.push(v);
      continue;
    }
    if (/^--(add|replace-all|append)$/.test(v)) mode = "write";
    else if (/^--(rename-section)$/.test(v)) mode = "rename";
    else if (
      /^(--get|--get-all|--get-regexp|--get-urlmatch|--get-color|--get-colorbool|--unset|--unset-all|--remove-section|-l|--list|-e|--edit|--show-origin|--name-only)$/.test(
        v,
      )
    ) {
      if (mode === "none") mode = "read";
    } else if (/^(-f|--file|--blob|--type|--default|--comment|--value)$/.test(v)) i++;
  }
  if (mode === "read") return undefined;
  if (mode === "rename") return { key: operands[1] ?? "", value: undefined, rename: true };
  if (mode === "none" && operands.length < 2) return undefined;
  const key = operands[0];
  if (key === undefined) return { key: "", value: undefined };
  return { key, value: operands[1] };
}

/**
 * Why capgate cannot read all a git command line runs, or undefined when it can: a global
 * option that moves where git finds its programs, a config key set on the line that is not
 * known data, a subcommand that is not one git ships with data arguments (an alias, an
 * external `git-foo`), `git config` setting such a key.
 */
export function gitUnreadable(cmd: ResolvedCommand): string | undefined {
  const { argv } = cmd;
  const at = gitSubcommandIndex(argv);
  for (let i = 1; i < at; i++) {
    const a = argv[i];
    if (a === undefined) return "a git global option is only known at run time";
    if (a === "-c") {
      const kv = argv[++i];
      if (kv === undefined) return "the value of git -c is only known at run time";
      const eq = kv.indexOf("=");
      const why = gitKeyUnreadable(
        eq === -1 ? kv : kv.slice(0, eq),
        eq === -1 ? undefined : kv.slice(eq + 1),
        "git -c",
      );
      if (why) return why;
      continue;
    }
    if (GIT_GLOBAL_VALUE.test(a)) {
      if (a === "--list-cmds" || a === "--config-env") return `git ${a} is not an option capgate reads`;
      i++;
      continue;
    }
    if (a === "--") continue;
    const eq = a.indexOf("=");
    const name = eq === -1 ? a : a.slice(0, eq);
    if (name === "--exec-path" && eq !== -1)
      return "git --exec-path=DIR runs git's subcommands from DIR, programs the command line does not show";
    if (/^(-C|-c)./.test(a)) {
      if (a.startsWith("-c")) {
        const kv = a.slice(2);
        const k = kv.indexOf("=");
        const why = gitKeyUnreadable(
          k === -1 ? kv : kv.slice(0, k),
          k === -1 ? undefined : kv.slice(k + 1),
          "git -c",
        );
        if (why) return why;
      }
      continue;
    }
    if (/^--(git-dir|work-tree|namespace|super-prefix|attr-source)=/.test(a)) continue;
    if (!GIT_GLOBAL_FLAGS.test(name)) return `\`${a}\` is not a git option capgate knows`;
  }
  const sub = argv[at];
  if (sub === undefined) return at < argv.length ? "the git subcommand is only known at run time" : undefined;
  if (Object.hasOwn(GIT_RUNNING_SUBCOMMANDS, sub)) return GIT_RUNNING_SUBCOMMANDS[sub];
  if (!GIT_DATA_SUBCOMMANDS.has(sub))
    return `\`git ${sub}\` is not a git command capgate knows: it may be an alias or an external git-${sub} program, which run whatever their definition says`;
  const rest = cmd.words.slice(at + 1);
  if (sub === "config") {
    const write = gitConfigWrite(rest);
    if (write?.rename)
      return "git config --rename-section can turn keys capgate read as data into aliases or programs";
    if (write) {
      if (write.key === "") return "the key git config sets is only known at run time";
      return gitKeyUnreadable(write.key, write.value, "git config");
    }
  }
  if (sub === "clone" || sub === "submodule") {
    // `clone -c key=value` and `--config key=value` set config in the new repository that the clone itself uses.
    for (let i = 0; i < rest.length; i++) {
      const v = rest[i]!.value;
      if (v === undefined) continue;
      const kv =
        v === "-c" || v === "--config"
          ? rest[++i]?.value
          : /^--config=/.test(v)
            ? v.slice(9)
            : /^-c./.test(v)
              ? v.slice(2)
              : null;
      if (kv === null) continue;
      if (kv === undefined) return `a git ${sub} config value is only known at run time`;
      const eq = kv.indexOf("=");
      const why = gitKeyUnreadable(
        eq === -1 ? kv : kv.slice(0, eq),
        eq === -1 ? undefined : kv.slice(eq + 1),
        `git ${sub} -c`,
      );
      if (why) return why;
    }
  }
  if (sub === "filter-branch") {
    for (const w of rest) {
      const v = w.value;
      if (v === undefined || v === "--") break;
      const name = v.replace(/=.*$/s, "");
      if (
        v.startsWith("-") &&
        !FILTER_SCRIPTS.test(name) &&
        !FILTER_VALUES.test(name) &&
        !/^(-f|--force|--prune-empty)$/.test(name)
      )
        return `\`${v}\` is not a git filter-branch option capgate knows`;
    }
  }
  return undefined;
}
