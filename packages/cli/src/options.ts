import { InvalidArgumentError } from 'commander';

export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port number from 0 to 65535');
  return n;
}

export function parseWorkers(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 256)
    throw new InvalidArgumentError('a number of workers from 0 (one per core) to 256');
  return n;
}
