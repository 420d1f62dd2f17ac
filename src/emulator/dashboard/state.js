// What the panels share: the last overview with its indexes, the transaction selected for the detail panel
// and the transactions filter. Panels read and write it; the feed (feed.js) sends the selection and filter.

export const state = {
  /** The overview last drawn (without its `now`), so an unchanged overview redraws nothing. */
  overviewKey: '',
  /** accountId -> { account, user, programme } */
  accounts: new Map(),
  /** userId -> { user, programme } */
  users: new Map(),
  selectedId: null,
  /** What the detail panel last drew, so an unchanged feed redraws nothing. */
  detailKey: '',
  deliveriesKey: '',
  storyKey: '',
  userFilter: '',
  /** The user whose journey is shown. */
  journeyUser: '',
};

export function indexOverview(overview) {
  state.accounts.clear();
  state.users.clear();
  for (const programme of overview.programmes) {
    for (const user of programme.users) {
      state.users.set(user.id, { user, programme });
      for (const account of user.accounts) state.accounts.set(account.id, { account, user, programme });
    }
  }
}
