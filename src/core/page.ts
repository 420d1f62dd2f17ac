/** One page of a list, the envelope every list endpoint answers (docs/architecture.md#layers: core, used by domains and http). */
export interface Page<T> {
  data: T[];
  pageIndex: number;
  pageSize: number;
  totalRecords: number;
}
