/**
 * A reader that goes away (`ack sync upload ... | head`) closes the pipe `ack` writes to. Node
 * ignores SIGPIPE, so the next write fails with EPIPE, an error event nobody handles, and a stack
 * trace. `ack` ends as any other program in a pipeline does then: quietly, by SIGPIPE (the shell
 * shows 141), or with that status where the signal cannot be raised.
 */
export function endQuietlyOnClosedOutput(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    // Removing the last listener gives SIGPIPE back its default action, which ends the process.
    const none = () => {};
    process.on('SIGPIPE', none);
    process.off('SIGPIPE', none);
    try {
      process.kill(process.pid, 'SIGPIPE');
    } catch {
      // No SIGPIPE on this platform.
    }
    process.exit(128 + 13);
  });
}
