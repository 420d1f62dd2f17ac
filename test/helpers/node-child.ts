// Child processes started by tests run as a user would run them: without tap's process-info hook, which tap
// adds to the NODE_OPTIONS of every process a test spawns (whatever `env` the test passes) and which costs each
// Node child about 0.6 s of CPU (a module-loader thread) before its first line. `env -u NODE_OPTIONS` removes it
// just before the command runs; the child keeps its pid, so signals and timeouts still reach it
// (docs/architecture.md#child-processes-of-tests).

/** `[command, args]` for spawn/spawnSync/execFile: `node ...args` without tap's hook. */
export function plainNode(args: readonly string[]): [string, string[]] {
  return plainCommand(process.execPath, args);
}

/** `[command, args]` for spawn/spawnSync/execFile: any command (a shell script, a Node bin) without tap's hook. */
export function plainCommand(command: string, args: readonly string[]): [string, string[]] {
  return ['env', ['-u', 'NODE_OPTIONS', command, ...args]];
}
