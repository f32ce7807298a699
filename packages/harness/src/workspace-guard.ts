import { realpathSync } from "node:fs";
import { CapgateError } from "@capgate/schema";
import { homeDirectories, isInside } from "@capgate/workspace";

/**
 * A workspace that is a home directory, or contains one, is refused before anything starts.
 * The tools would keep ~/.ssh & co. hidden (the path guard and the sandbox share one hide
 * list), but everything else a home holds — dotfiles that other programs execute
 * (~/.bashrc, ~/.profile, ~/.config/autostart, ~/.local/bin), the user's other projects,
 * browser downloads — would be writable by the model, and git tools that stage a whole
 * tree would sweep it up. docs/decisions.md ("sandboxfs: a workspace at or above HOME").
 * @throws CapgateError `invalid_workspace` naming the home directory and what to do instead.
 */
export function refuseHomeWorkspace(workspaceReal: string, env: Record<string, string | undefined>): void {
  for (const home of homeDirectories(env)) {
    let real: string;
    try {
      real = realpathSync(home);
    } catch {
      continue; // a HOME that does not exist holds nothing to protect
    }
    if (real === "/" || !isInside(workspaceReal, real)) continue;
    const what = real === workspaceReal ? "is your home directory" : `contains your home directory '${real}'`;
    throw new CapgateError(
      "invalid_workspace",
      `The workspace '${workspaceReal}' ${what}. capgate refuses it: the model could write your shell start-up files, ~/.config and every other project under it, and git tools would stage them. Credentials (~/.ssh, ~/.aws, …) stay hidden either way, but a home is not a project. Pass --workspace <a project directory> (e.g. ~/code/myproject), or set "workspace" in capgate.config.json.`,
      { property: "workspace" },
    );
  }
}
