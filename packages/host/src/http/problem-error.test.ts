import { describe, expect, it } from 'vitest';
import { ProblemError } from './problem.js';

// `instanceof ProblemError` also holds for one made by another copy of @ack/host (the ack command
// bundles its own; a module imports the library). Checked end to end in cli's serve-module-api test.
describe('instanceof ProblemError', () => {
  const problem = { status: 409, code: 'orders.locked' };

  it('holds for a ProblemError of another copy, which carries the same registry symbol', () => {
    class OtherCopy extends Error {}
    Object.defineProperty(OtherCopy.prototype, Symbol.for('@ack/host.ProblemError'), { value: true });
    expect(new ProblemError(problem)).toBeInstanceOf(ProblemError);
    expect(new OtherCopy() instanceof ProblemError).toBe(true);
  });

  it('does not hold for an error that only has its name, a look-alike object, or a primitive', () => {
    const named = Object.assign(new Error('x'), { name: 'ProblemError', problem });
    expect(named instanceof ProblemError).toBe(false);
    expect({ problem } instanceof ProblemError).toBe(false);
    expect(Object.create(null) instanceof ProblemError).toBe(false);
    expect((null as unknown) instanceof ProblemError).toBe(false);
    expect(('ProblemError' as unknown) instanceof ProblemError).toBe(false);
  });

  it('keeps the ordinary check for a subclass', () => {
    class LockedProblem extends ProblemError {}
    const locked = new LockedProblem(problem);
    expect(locked).toBeInstanceOf(LockedProblem);
    expect(locked).toBeInstanceOf(ProblemError);
    expect(new ProblemError(problem) instanceof LockedProblem).toBe(false);
  });
});
