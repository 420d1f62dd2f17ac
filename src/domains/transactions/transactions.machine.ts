import type { TransitionTable } from '../../lib/state-machine.js';

// docs/decisions.md#rail-timeline: PENDING -> PROCESSING -> COMPLETED | FAILED. Incoming deposits settle straight from
// PENDING; an outgoing transaction can fail before processing (for example insufficient funds on a payout).
export const TRANSACTION_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export const transactionTransitions: TransitionTable<TransactionStatus> = {
  PENDING: ['PROCESSING', 'COMPLETED', 'FAILED'],
  PROCESSING: ['COMPLETED', 'FAILED'],
  COMPLETED: [],
  FAILED: [],
};

export const TRANSACTION_TYPES = ['TRANSFER', 'DEPOSIT', 'WITHDRAWAL', 'REFUND', 'PARTIAL_REFUND'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

// interface 2.4: the finer classification, named `category` (docs/decisions.md#transaction-unnamed-fields)
export const TRANSACTION_CATEGORIES = [
  'AUTOSWEEP',
  'CASH_IN',
  'P2P',
  'MERCHANT',
  'MANUAL',
  'AUTOPAY',
  'DIRECT_DEBIT',
  'INTERNAL_SWEEP',
  'REWARD',
  'YIELD_FUNDING',
  'YIELD_PAYOUT',
] as const;
export type TransactionCategory = (typeof TRANSACTION_CATEGORIES)[number];

// interface 2.7
export const PAYMENT_PURPOSES = [
  'PAYMENT_FOR_SERVICES',
  'PAYMENT_FOR_SOFTWARE',
  'PAYMENT_FOR_IMPORTED_GOODS',
  'TRAVEL_SERVICES',
  'VENDOR_CONTRACTOR_PAYOUTS',
  'TRANSFER_TO_OWN_ACCOUNT',
  'INVESTMENT_IN_SHARES',
  'PURCHASE_OF_PROPERTY',
  'REPAYMENT_OF_LOANS',
  'SALARY',
  'PAYMENT_OF_PROPERTY_RENTAL',
  'INFORMATION_SERVICE_CHARGES',
  'ADVERTISING_AND_PUBLIC_RELATIONS_EXPENSES',
  'ROYALTY_TRADEMARK_PATENT_AND_COPYRIGHT_FEES',
  'BROKER_FRONTEND_GUARANTEE_AND_CUSTODIAN_FEES',
  'ADVISOR_TECHNICAL_AND_ACADEMIC_FEES',
  'REPRESENTATIVE_OFFICE_EXPENSES',
  'TAX_PAYMENT',
  'TRANSPORTATION_FEES_FOR_GOODS',
  'CONSTRUCTION_COSTS',
  'INSURANCE_PREMIUM',
  'GENERAL_GOODS_TRADES_OFFLINE',
  'INSURANCE_CLAIMS_PAYMENT',
  'FAMILY_MAINTENANCE',
  'EDUCATION_RELATED_EXPENSES',
  'MEDICAL_TREATMENT',
  'DONATIONS',
  'MUTUAL_FUND_INVESTMENT',
  'CURRENCY_EXCHANGE',
  'USER_WITHDRAWAL',
  'ADVANCE_PAYMENTS_FOR_GOODS',
  'VENDOR_CONTRACTOR_PAYOUTS_SOFTWARE_DEVELOPMENT',
  'MERCHANT_SETTLEMENT',
  'REPATRIATION_FUND_SETTLEMENT',
  'PERSONAL_REMITTANCE',
  'RETURN_OF_FUNDS',
] as const;
export type PaymentPurpose = (typeof PAYMENT_PURPOSES)[number];
