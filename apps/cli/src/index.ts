export async function runCli(_argv: string[]): Promise<number> {
  return 0;
}
