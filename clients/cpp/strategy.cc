// The same strategy as clients/node/strategy.js, so the two are easy to compare:
//   play (R5): the largest group that abluxxes an opponent (R8); else the largest; ties: fewer jokers, higher value
//   take or decline (R9): take;  reclaim or discard (R9): reclaim
//   draw (R10): a market joker; else the market card the hand holds most of; else the pile
//   draw one: as draw, but skip rather than draw a card that matches nothing in the hand
#include "strategy.h"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <stdexcept>

namespace cppbot {
namespace {

using abluxxen::v1::Action;
using abluxxen::v1::DecisionRequest;
using abluxxen::v1::Group;
using abluxxen::v1::Stack;
using Score = std::array<int, 4>;

constexpr int kJoker = 14;

int Count(const Group& g) { return g.numbers() + g.jokers(); }

// R8: `group` abluxxes a stack whose top group has as many cards and a lower value.
bool Abluxxes(const Group& group, const Stack& stack) {
  if (stack.groups_size() == 0) return false;
  const Group& top = stack.groups(stack.groups_size() - 1);
  return Count(group) == Count(top) && group.value() > top.value();
}

// The index of the best legal action by `score` (arrays compared left to right), or -1 when none scores.
int Best(const DecisionRequest& req, const std::function<std::optional<Score>(const Action&)>& score) {
  int best = -1;
  Score best_score{};
  for (int i = 0; i < req.legal_actions_size(); ++i) {
    std::optional<Score> s = score(req.legal_actions(i));
    if (s && (best < 0 || *s > best_score)) {
      best = i;
      best_score = *s;
    }
  }
  return best;
}

int ChoosePlay(const DecisionRequest& req) {
  const auto& view = req.view();
  return Best(req, [&view](const Action& a) -> std::optional<Score> {
    if (!a.has_play()) return std::nullopt;
    const Group& g = a.play();
    int hits = 0;
    for (int seat = 0; seat < view.stacks_size(); ++seat) {
      if (seat != view.seat() && Abluxxes(g, view.stacks(seat))) hits = 1;
    }
    return Score{hits, Count(g), -g.jokers(), g.value()};
  });
}

int FindChoice(const DecisionRequest& req, abluxxen::v1::Choice choice) {
  for (int i = 0; i < req.legal_actions_size(); ++i) {
    const Action& a = req.legal_actions(i);
    if (a.action_case() == Action::kChoice && a.choice() == choice) return i;
  }
  return -1;
}

int ChooseDraw(const DecisionRequest& req, bool optional) {
  const auto& hand = req.view().hand();
  int market = Best(req, [&hand](const Action& a) -> std::optional<Score> {
    if (!a.has_draw() || a.draw().source() != abluxxen::v1::DRAW_SOURCE_MARKET) return std::nullopt;
    int card = a.draw().card();
    if (card == kJoker) return Score{100, 0, 0, 0};
    int held = static_cast<int>(std::count(hand.begin(), hand.end(), card));
    if (held == 0) return std::nullopt;
    return Score{held, card, 0, 0};
  });
  if (market >= 0) return market;
  if (optional) {
    int skip = FindChoice(req, abluxxen::v1::CHOICE_SKIP);
    if (skip >= 0) return skip;
  }
  for (int i = 0; i < req.legal_actions_size(); ++i) {
    const Action& a = req.legal_actions(i);
    if (a.has_draw() && a.draw().source() == abluxxen::v1::DRAW_SOURCE_PILE) return i;
  }
  return 0;
}

}  // namespace

int Choose(const DecisionRequest& req) {
  if (req.legal_actions_size() == 0) throw std::runtime_error("the request lists no legal action");
  int choice = 0;
  switch (req.kind()) {
    case abluxxen::v1::DECISION_KIND_PLAY:
      choice = ChoosePlay(req);
      if (choice < 0) throw std::runtime_error("a play request lists no group");
      return choice;
    case abluxxen::v1::DECISION_KIND_TAKE_OR_DECLINE:
      return std::max(FindChoice(req, abluxxen::v1::CHOICE_TAKE), 0);
    case abluxxen::v1::DECISION_KIND_RECLAIM_OR_DISCARD:
      return std::max(FindChoice(req, abluxxen::v1::CHOICE_RECLAIM), 0);
    case abluxxen::v1::DECISION_KIND_DRAW:
      return ChooseDraw(req, false);
    case abluxxen::v1::DECISION_KIND_DRAW_ONE:
      return ChooseDraw(req, true);
    default:
      return 0;  // a kind this bot does not know: any listed action is legal
  }
}

}  // namespace cppbot
