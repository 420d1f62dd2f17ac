import { z } from 'zod';

// The guided demo's control-plane answers (docs/dashboard.md#run-a-demo).

export const demoStepParams = z.object({
  number: z.coerce
    .number({ error: 'number must be a step number, an integer from 1' })
    .int('number must be a step number, an integer from 1')
    .min(1, 'number must be a step number, an integer from 1')
    .max(1000, 'number must be a step number, an integer from 1'),
});

export const demoStepSchema = z
  .object({
    number: z.number().int().describe('1-based; steps run in this order'),
    id: z.string(),
    caption: z.string().describe('What the page shows while the step runs'),
    done: z.boolean(),
    summary: z.string().nullable().describe('What the step did, once done'),
    transactionId: z.string().nullable().describe('The transaction the step made or moved, once done'),
  })
  .meta({ id: 'DemoStep' });
export type DemoStepView = z.infer<typeof demoStepSchema>;

export const demoStateSchema = z
  .object({
    steps: z.array(demoStepSchema),
    completed: z.number().int().describe('How many steps have run'),
    next: z.number().int().nullable().describe('The number of the step to run next; null once finished'),
    finished: z.boolean(),
    running: z.boolean().describe('A step is running now'),
    userId: z.string().nullable().describe('The business the demo onboards, once created'),
    accountId: z.string().nullable().describe('Its USD account, once opened'),
  })
  .meta({ id: 'DemoState' });
export type DemoState = z.infer<typeof demoStateSchema>;

export const demoStepResultSchema = z
  .object({
    step: demoStepSchema,
    demo: demoStateSchema,
  })
  .meta({ id: 'DemoStepResult' });
export type DemoStepResult = z.infer<typeof demoStepResultSchema>;
