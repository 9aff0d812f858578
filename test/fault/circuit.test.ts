import { describe, expect, it } from 'vitest';
import { createCircuit } from '../../core/db/circuit.ts';
import { createLogger } from '../../core/log.ts';

/** A probe whose answer the test decides, counting how often and how many at once it runs. */
function controlledProbe() {
  const state = { reachable: false, calls: 0, running: 0, mostAtOnce: 0 };
  const probe = async () => {
    state.calls++;
    state.running++;
    state.mostAtOnce = Math.max(state.mostAtOnce, state.running);
    await new Promise((done) => setTimeout(done, 5));
    state.running--;
    if (!state.reachable) throw Object.assign(new Error('refused'), { code: '57P03' });
  };
  return { state, probe };
}

describe('the database circuit', () => {
  it('opens on the first connection failure only, not on a query error', () => {
    const { probe } = controlledProbe();
    const circuit = createCircuit(probe, createLogger('silent'));
    circuit.recordFailure(Object.assign(new Error('syntax error'), { code: '42601' }));
    circuit.recordFailure(new Error('no code at all'));
    expect(circuit.isOpen()).toBe(false);
    circuit.recordFailure(Object.assign(new Error('cannot connect'), { code: 'DATABASE_UNAVAILABLE', cause: { code: 'ECONNREFUSED' } }));
    expect(circuit.isOpen()).toBe(true);
    expect(circuit.unavailableError()).toMatchObject({ code: 'DATABASE_UNAVAILABLE', message: expect.stringContaining('ECONNREFUSED') });
  });

  it('while open, verify answers false without probing; one probe at a time runs until one succeeds, which closes it', async () => {
    const { state, probe } = controlledProbe();
    const circuit = createCircuit(probe, createLogger('silent'));
    circuit.recordFailure({ code: 'CONNECTION_CLOSED' });
    expect(await circuit.verify()).toBe(false);
    expect(state.calls).toBe(0);

    await circuit.nextProbe();
    expect(state.calls).toBeGreaterThan(0);
    expect(circuit.isOpen()).toBe(true);
    state.reachable = true;
    while (circuit.isOpen()) await circuit.nextProbe();
    expect(state.mostAtOnce).toBe(1);
    expect(await circuit.verify()).toBe(true);
  });

  it('when closed, verify opens a fresh connection, and a refusal (57P03) opens the circuit', async () => {
    const { state, probe } = controlledProbe();
    const circuit = createCircuit(probe, createLogger('silent'));
    const answers = await Promise.all([circuit.verify(), circuit.verify(), circuit.verify()]);
    expect(answers).toEqual([false, false, false]);
    expect(state.calls).toBe(1);
    expect(circuit.isOpen()).toBe(true);
  });
});
