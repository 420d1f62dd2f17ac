import type { DomainDescriptor } from '../domain.js';
import { depositInstructionsRoutes } from './deposit-instructions.routes.js';
import { PROVISION_DEPOSIT_INSTRUCTION_JOB, provisionDepositInstruction } from './deposit-instructions.service.js';

export const depositInstructionsDomain: DomainDescriptor = {
  name: 'deposit-instructions',
  routes: [depositInstructionsRoutes],
  jobs: { [PROVISION_DEPOSIT_INSTRUCTION_JOB]: provisionDepositInstruction },
};
