import { PeriodicPass } from './periodic-pass';

describe('PeriodicPass', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('given a pass still running, when the next beat comes, then it is not started twice; stop waits for it', async () => {
    let started = 0;
    let finish!: () => void;
    const loop = new PeriodicPass(
      100,
      () => {
        started += 1;
        return new Promise<void>((resolve) => (finish = resolve));
      },
      () => undefined,
    );
    loop.start();
    await jest.advanceTimersByTimeAsync(350);
    expect(started).toBe(1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(stopped).toBe(true);
    await jest.advanceTimersByTimeAsync(500);
    expect(started).toBe(1);
  });

  it('given a failing pass, when it fails, then the error goes to failed and the next beat runs again', async () => {
    const errors: unknown[] = [];
    let started = 0;
    const loop = new PeriodicPass(
      100,
      () => {
        started += 1;
        return Promise.reject(new Error(`pass ${started}`));
      },
      (error) => errors.push(error),
    );
    loop.start();
    await jest.advanceTimersByTimeAsync(250);
    await loop.stop();
    expect(started).toBe(2);
    expect(errors.map((e) => (e as Error).message)).toEqual(['pass 1', 'pass 2']);
  });

  it('given due says no, when a beat comes, then no pass starts', async () => {
    let due = false;
    let started = 0;
    const loop = new PeriodicPass(
      100,
      async () => {
        started += 1;
      },
      () => undefined,
      () => due,
    );
    loop.start();
    await jest.advanceTimersByTimeAsync(250);
    expect(started).toBe(0);
    due = true;
    await jest.advanceTimersByTimeAsync(100);
    await loop.stop();
    expect(started).toBe(1);
  });
});
