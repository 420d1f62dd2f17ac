import type { Migration } from './migration.js';
import { migration001Core } from './001-core.js';
import { migration002MoneyIn } from './002-money-in.js';
import { migration003MoneyOut } from './003-money-out.js';
import { migration004Webhooks } from './004-webhooks.js';
import { migration005Statements } from './005-statements.js';
import { migration006Enrollment } from './006-enrollment.js';
import { migration007ProgrammeTransactions } from './007-programme-transactions.js';
import { migration008IntentFlows } from './008-intent-flows.js';
import { migration009DeliveryStatusOnce } from './009-delivery-status-once.js';
import { migration010WrittenAmount } from './010-written-amount.js';
import { migration011WebhookChaos } from './011-webhook-chaos.js';
import { migration012InFlightSums } from './012-in-flight-sums.js';
import { migration013LeanWrites } from './013-lean-writes.js';
import { migration014StatusMoves } from './014-status-moves.js';

// Add new migrations here with the next number; never edit one that has shipped.
export const migrations: Migration[] = [
  migration001Core, migration002MoneyIn, migration003MoneyOut, migration004Webhooks, migration005Statements, migration006Enrollment,
  migration007ProgrammeTransactions, migration008IntentFlows, migration009DeliveryStatusOnce, migration010WrittenAmount,
  migration011WebhookChaos, migration012InFlightSums, migration013LeanWrites, migration014StatusMoves,
];
