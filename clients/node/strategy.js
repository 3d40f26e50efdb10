// The bot's strategy: one pure function from a DecisionRequest to an index into its legal_actions.
// Change `choose` (or the helpers it calls) to change how the bot plays; the server in bot.js only transports.
//
// Messages are plain objects as @grpc/proto-loader decodes them (see bot.js): snake_case field names as in
// proto/abluxxen/v1/*.proto, enums as their names ('DECISION_KIND_PLAY'), and each oneof's name in a field
// of its own (an Action has `action: 'play' | 'draw' | 'choice'`).
'use strict';

const JOKER = 14;

// The group a play would abluxx on `stack` (R8): same count as the top group, strictly higher value.
function abluxxes(group, stack) {
  const top = stack.groups[stack.groups.length - 1];
  if (!top) return false;
  const count = (g) => g.numbers + g.jokers;
  return count(group) === count(top) && group.value > top.value;
}

// How many of `card` the hand holds.
function held(hand, card) {
  return hand.filter((c) => c === card).length;
}

// Index of the best entry of `items` by `score` (arrays compared left to right), or -1 for none.
function best(items, score) {
  let bestIndex = -1;
  let bestScore = null;
  items.forEach((item, i) => {
    const s = score(item);
    if (s === null) return;
    if (bestScore === null || greater(s, bestScore)) {
      bestIndex = i;
      bestScore = s;
    }
  });
  return bestIndex;
}

function greater(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

// R5: lay the largest group that abluxxes someone; else the largest group. Ties keep jokers back, then lay
// the higher value (harder to abluxx later).
function choosePlay(req) {
  const { view, legal_actions: legal } = req;
  const opponents = view.stacks.filter((_, seat) => seat !== view.seat);
  const score = (a) => {
    const g = a.play;
    const hits = opponents.some((stack) => abluxxes(g, stack)) ? 1 : 0;
    return [hits, g.numbers + g.jokers, -g.jokers, g.value];
  };
  return best(legal, score);
}

// R10: draw a joker from the market, else the market card the hand holds most of, else the pile.
// With `optional` (option draw_one) skip rather than draw a card that matches nothing in the hand.
function chooseDraw(req, optional) {
  const { view, legal_actions: legal } = req;
  const marketScore = (a) => {
    if (a.action !== 'draw' || a.draw.source !== 'DRAW_SOURCE_MARKET') return null;
    const card = a.draw.card;
    if (card === JOKER) return [100];
    const n = held(view.hand, card);
    return n > 0 ? [n, card] : null;
  };
  const market = best(legal, marketScore);
  if (market >= 0) return market;
  if (optional) {
    const skip = legal.findIndex((a) => a.action === 'choice' && a.choice === 'CHOICE_SKIP');
    if (skip >= 0) return skip;
  }
  const pile = legal.findIndex((a) => a.action === 'draw' && a.draw.source === 'DRAW_SOURCE_PILE');
  return pile >= 0 ? pile : 0;
}

// The first legal action that is `choice`, else the first action.
function pick(req, choice) {
  const i = req.legal_actions.findIndex((a) => a.action === 'choice' && a.choice === choice);
  return i >= 0 ? i : 0;
}

// The index into req.legal_actions that the bot answers.
function choose(req) {
  switch (req.kind) {
    case 'DECISION_KIND_PLAY':
      return Math.max(choosePlay(req), 0);
    case 'DECISION_KIND_TAKE_OR_DECLINE':
      return pick(req, 'CHOICE_TAKE'); // R9: the victim's group goes into our hand, to lay again later
    case 'DECISION_KIND_RECLAIM_OR_DISCARD':
      return pick(req, 'CHOICE_RECLAIM'); // R9: known cards back, rather than as many unknown ones
    case 'DECISION_KIND_DRAW':
      return chooseDraw(req, false);
    case 'DECISION_KIND_DRAW_ONE':
      return chooseDraw(req, true);
    default:
      return 0; // a kind this bot does not know: any listed action is legal
  }
}

module.exports = { choose };
