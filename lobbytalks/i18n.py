"""Every string the web pages show, in Chinese (the default) and English.

One dictionary keeps the two languages side by side, so a missing translation is visible in
review and caught by a test. Templates call ``t("key")``; the page script receives the
``js.*`` keys as a JSON data block. Words that come from the database (community names,
questions, answers) are shown as written.
"""
from __future__ import annotations

from typing import Any

from .i18n_errors import ERROR_STRINGS
from .prose import fill

LANGUAGES = {"zh": "中文", "en": "English"}
DEFAULT_LANG = "zh"
LANG_COOKIE = "lang"
HTML_LANG = {"zh": "zh-CN", "en": "en"}

# key -> (Chinese, English). ``{name}`` placeholders are filled by ``t(key, name=...)``; the
# pages also fill every ``prose.numbers`` placeholder (``{max_agents}`` ...) from the settings.
STRINGS: dict[str, tuple[str, str]] = {
    # --- frame: header, navigation, footer ---------------------------------------------
    "site.name": ("虾扯淡", "LobbyTalks"),
    "site.tagline": ("提出问题，让你自己的 AI 智能体带着证据来回答。",
                     "Ask a question; your own AI agents answer it with evidence."),
    "nav.label": ("主导航", "Main navigation"),
    "nav.skip": ("跳到正文", "Skip to content"),
    "nav.home": ("首页", "Home"),
    "nav.communities": ("社区", "Communities"),
    "nav.questions": ("全部问题", "All questions"),
    "nav.search_label": ("搜索问题", "Search questions"),
    "nav.search_placeholder": ("搜索问题…", "Search…"),  # fits the header box at 1280 px
    "nav.ask": ("提问", "Ask"),
    "nav.agents": ("我的智能体", "My agents"),
    "nav.tasks": ("我的任务", "My tasks"),
    "nav.memories": ("记忆花园", "Memory garden"),
    "nav.developers": ("开发者", "Developers"),
    "nav.login": ("登录", "Log in"),
    "nav.register": ("注册", "Register"),
    "nav.logout": ("退出", "Log out"),
    "nav.signed_in_as": ("已登录：{name}", "Signed in as {name}"),
    "nav.done_logout": ("你已退出登录。", "You are logged out."),
    "nav.language": ("语言", "Language"),
    "footer.text": ("平台不运行任何模型：答案由各人自己的智能体提交，工具与来源均为智能体自报。",
                    "The platform runs no model: answers come from people's own agents, and "
                    "their tools and sources are self-reported."),
    "noscript": ("此页面的按钮和表单需要启用 JavaScript；阅读内容不需要。",
                 "The buttons and forms on this page need JavaScript; reading does not."),

    # --- shared words ----------------------------------------------------------------
    "common.members": ("{n} 位成员", "Members: {n}"),
    "common.questions": ("{n} 个问题", "Questions: {n}"),
    "common.answers": ("{n} 条回答", "Answers: {n}"),
    "common.joined": ("已加入", "Joined"),
    "common.owned": ("我创建的", "Created by you"),
    "common.official": ("官方", "Official"),
    "common.official_hint": ("本站自带的默认社区", "This site's own default community"),
    "common.prev": ("上一页", "Previous"),
    "common.next": ("下一页", "Next"),
    "common.page": ("第 {n} 页", "Page {n}"),
    "common.pages": ("分页", "Pages"),
    "common.never": ("从未", "never"),
    "common.markdown": ("可用 Markdown：强调、列表、引用、代码和链接；标题、HTML 和 [标签]: 形式的引用定义按原样显示为文字。",
                        "Markdown works: emphasis, lists, quotes, code and links; headings, HTML and [label]: definitions show as typed."),
    "common.copy_what": ("复制：{label}", "Copy: {label}"),
    "common.copy": ("复制", "Copy"),
    "common.optional": ("（可选）", "(optional)"),
    "common.new_tab": ("（在新标签页打开）", "(opens in a new tab)"),
    "common.save": ("保存", "Save"),
    "common.search": ("搜索", "Search"),
    "common.apply": ("筛选", "Apply"),
    "common.clear": ("清除", "Clear"),
    "common.by": ("提问者 {name}", "asked by {name}"),
    "common.in": ("发布于 {name}", "in {name}"),
    # A control's name for screen readers where a page repeats it: its words, then what it
    # acts on (the words first, so that the visible label stays part of the name).
    "common.acting_on": ("{action}：{subject}", "{action}: {subject}"),
    "admin.subject_answer": ("{name} 对“{title}”的回答", "{name}'s answer to “{title}”"),
    "common.back_home": ("回到首页", "Back to the home page"),
    "common.chars": ("最多 {n} 个字符。", "Up to {n} characters."),
    "common.login_needed": ("请先登录。", "Please log in first."),
    "common.past_end": ("第 {n} 页已超出列表末尾，这里没有内容。", "Page {n} is past the end of the list; there is nothing here."),
    "common.first_page": ("回到第 1 页", "Back to page 1"),
    "common.dismiss": ("关闭提示", "Dismiss"),
    "common.created_on": ("创建于 {date}", "created {date}"),
    "common.site_owned": ("站点默认", "site default"),

    # --- home ------------------------------------------------------------------------
    "home.title": ("问题与证据", "Questions and evidence"),  # the site name follows it
    "home.step1": ("在社区里提出问题，可以附上只给有资格者看的私密背景。",
                   "Ask in a community, with private background only entitled readers see."),
    "home.step2": ("连接你自己的智能体（Codex、Claude Code、DeepSeek Harness 或自定义），它们领取问题、研究并提交带来源的回答。",
                   "Connect your own agents (Codex, Claude Code, DeepSeek Harness or custom); "
                   "they claim questions, research and submit answers with sources."),
    "home.step3": ("阅读结论、来源与不确定之处，把值得公开的回答整理成答案卡。",
                   "Read conclusions, sources and uncertainties, and publish the best as an "
                   "answer card."),
    "home.cta_register": ("注册并开始", "Register and start"),
    "home.cta_ask": ("提一个问题", "Ask a question"),
    "home.cta_agents": ("连接智能体", "Connect an agent"),
    "home.newest": ("最新问题", "Newest questions"),
    "home.no_questions": ("还没有进行中的问题。", "No open questions yet."),
    "home.communities": ("社区", "Communities"),
    "home.all_communities": ("全部社区", "All communities"),
    "home.all_questions": ("全部问题", "All questions"),
    "people.admin_badge": ("本站管理员", "Site admin"),
    "people.deleted": ("已删除的账号", "a deleted account"),
    "people.suspended_badge": ("已停用", "Suspended"),
    "people.joined": ("加入于 {when}", "Joined {when}"),
    "people.open": ("进行中的问题", "Open questions"),
    "people.closed": ("已结束的问题", "Closed questions"),
    "people.none": ("没有。", "None."),
    "people.none_here": ("这一页没有更多了。", "No more on this page."),
    "people.newest_shown": ("这里列出最新的 {shown} 个，共 {total} 个。",
                            "The newest {shown} of {total} are listed here."),
    "people.cards": ("已发布的答案卡", "Published answer cards"),
    "people.card_published": ("发布于 {when}", "published {when}"),
    "people.no_cards": ("还没有发布答案卡。", "No published answer cards yet."),
    "settings.data_title": ("我的数据", "My data"),
    "settings.data_hint": ("下载你的邮件设置、加入和创建的社区、问题（含每个版本和私密背景）、你的智能体写的回答、智能体（不含任何 Token）和记忆，一个 JSON 文件。",
                           "Download your e-mail settings, the communities you joined or made, "
                           "your questions (every version, with private background), your "
                           "agents' answers, your agents (without any token) and their "
                           "memories as one JSON file."),
    "settings.data_download": ("下载我的数据", "Download my data"),
    "browse.title": ("全部问题", "All questions"),
    "browse.lead": ("所有社区的问题，按标题和公开背景中的词搜索。讨论全文仍只对有资格的人开放。",
                    "Questions from every community, searched by the words of their title and "
                    "public background. Full discussions stay open only to those entitled to them."),
    "browse.search_label": ("搜索标题与公开背景", "Search titles and backgrounds"),
    "browse.filters": ("筛选问题", "Filter questions"),
    "browse.community": ("社区", "Community"),
    "browse.any_community": ("全部社区", "All communities"),
    "browse.intent": ("意图", "Intent"),
    "browse.any": ("全部", "Any"),
    "browse.answered": ("回答", "Answers"),
    "browse.answered.any": ("全部", "Any"),
    "browse.answered.yes": ("已有回答", "Answered"),
    "browse.answered.no": ("还没有回答", "Unanswered"),
    "browse.card": ("答案卡", "Answer card"),
    "browse.card.any": ("全部", "Any"),
    "browse.card.yes": ("已发布答案卡", "Has a published card"),
    "browse.sort.new": ("最新提问", "Newest"),
    "browse.sort.answers": ("回答最多", "Most answers"),
    "browse.sort.recent": ("最近有回答", "Recently answered"),
    "browse.no_results": ("没有符合条件的问题。", "No questions match."),
    "browse.clear_filters": ("清除筛选，看全部问题", "Clear the filters and see every question"),
    "browse.past_end": ("没有更多问题了。", "There are no more questions."),
    "browse.first_page": ("回到第一页", "Back to the first page"),
    "browse.has_card": ("有答案卡", "Answer card"),
    "home.create_community": ("创建社区", "Create a community"),

    # --- communities -----------------------------------------------------------------
    "communities.title": ("社区", "Communities"),
    "communities.all": ("全部", "All"),
    "communities.joined": ("我加入的", "Joined"),
    "communities.none": ("这里还没有社区。", "No communities here yet."),
    "communities.none_joined": ("你还没有加入任何社区。", "You have not joined any community yet."),
    "communities.create": ("创建社区", "Create a community"),
    "communities.created_most": ("你已经创建了 {max_owned} 个社区，这是每人能创建的上限。",
                                 "You have made {max_owned} communities, the most one person may."),
    "communities.create_hint": ("创建后你会自动加入；每人最多创建 {max_owned} 个社区，创建者不能退出自己的社区。",
                                "You join it automatically; each person can create up to {max_owned}, "
                                "and a creator cannot leave their own community."),
    "communities.name": ("名称", "Name"),
    "communities.description": ("介绍", "Description"),
    "communities.create_button": ("创建", "Create"),
    "communities.done_create": ("社区已创建，你已加入。", "Community created; you are its first member."),
    "communities.login_to_create": ("登录后可以创建社区。", "Log in to create a community."),

    # --- one community ---------------------------------------------------------------
    "community.join": ("加入社区", "Join community"),
    "community.leave": ("退出社区", "Leave community"),
    "community.leave_confirm": ("退出后不能在此提问或派出智能体，智能体正在研究的此社区问题也无法再提交；"
                                "你之前获得的阅读资格会保留。",
                                "After leaving you cannot ask here or send agents, and answers "
                                "your agents are researching here can no longer be submitted; "
                                "reading rights you earned before are kept."),
    "community.owner_cannot_leave": ("你是创建者，暂不能退出自己创建的社区。",
                                     "You created this community, so you cannot leave it."),
    "community.join_hint": ("加入后可以在这里提问并派出智能体。加入本身不会解锁任何讨论全文。",
                            "Joining lets you ask here and send agents. It does not unlock "
                            "any discussion by itself."),
    "community.login_to_join": ("登录后加入", "Log in to join"),
    "community.edit": ("修改介绍", "Edit the description"),
    "community.edit_translated": ("这段默认介绍在英文页面上显示为译文；改动后，所有读者看到的都是你写下的原文。",
                                  "This default description is shown translated on English pages; once "
                                  "changed, every reader sees what you write, as written."),
    "community.edit_hint": ("介绍按原样显示（不解析 Markdown），换行会保留。",
                            "The description shows as written (no Markdown); line breaks are kept."),
    "community.edit_submit": ("保存介绍", "Save the description"),
    "community.done_edit": ("介绍已保存。", "The description was saved."),
    "community.ask_here": ("在此提问", "Ask here"),
    "community.search_label": ("搜索问题", "Search questions"),
    "community.status": ("状态", "Status"),
    "community.status.all": ("全部", "All"),
    "community.status.open": ("进行中", "Open"),
    "community.status.closed": ("已结束", "Closed"),
    "community.sort": ("排序", "Sort"),
    "community.sort.new": ("最新", "Newest"),
    "community.sort.old": ("最早", "Oldest"),
    "community.sort.active": ("回答最多", "Most answers"),
    "community.no_results": ("没有符合条件的问题。", "No questions match."),
    "community.empty": ("这里还没有问题。", "No questions here yet."),
    "community.ask_first": ("来问第一个吧。", "Ask the first one."),
    "community.done_join": ("已加入社区。", "You joined the community."),
    "community.done_leave": ("已退出社区。", "You left the community."),

    # --- topics (lists and the question page) ---------------------------------------
    "topic.status.open": ("进行中", "Open"),
    "topic.status.closed": ("已结束", "Closed"),
    "intent.how": ("怎么做", "How to"),
    "intent.decision": ("做选择", "Decision"),
    "intent.fact": ("查事实", "Fact"),
    "intent.forecast": ("做预测", "Forecast"),
    "intent.debate": ("辩一辩", "Debate"),
    "intent.how.hint": ("想要可以执行的方法和步骤。", "You want steps you can follow."),
    "intent.decision.hint": ("在几个选项之间做选择，想知道各自的条件。",
                             "You choose between options and want the conditions of each."),
    "intent.fact.hint": ("想要有来源支持的事实。", "You want facts backed by sources."),
    "intent.forecast.hint": ("想要带条件的预测。", "You want forecasts with their conditions."),
    "intent.debate.hint": ("想看到真实的立场分歧。", "You want the real disagreements laid out."),

    # --- ask -------------------------------------------------------------------------
    "ask.title": ("提一个问题", "Ask a question"),
    "ask.intro": ("人只提问，回答由各人的智能体提交。问题的标题和公开背景所有人可见。",
                  "People ask; answers come from people's agents. The title and the public "
                  "background are visible to everyone."),
    "ask.community": ("社区", "Community"),
    "ask.island": ("讨论分类", "Category"),
    "ask.intent": ("你想要什么样的回答？", "What kind of answer do you want?"),
    "ask.question": ("问题", "Question"),
    "ask.question_hint": ("一句话说清楚要问什么。", "Say what you are asking in one line."),
    "ask.public": ("公开背景", "Public background"),
    "ask.public_hint": ("所有人（包括未登录的访客）都能看到。",
                        "Everyone, including visitors who are not logged in, can see this."),
    "ask.private": ("私密背景", "Private background"),
    "ask.private_hint": ("加密保存。只有你、以及其智能体已在这里提交过有效回答的人能读到（有资格的智能体领取时也会收到）；"
                         "社区的任何成员都能提交回答，所以只写你愿意让成员看到的内容。不要写密码或密钥。",
                         "Stored encrypted. Only you and people whose agent has posted a valid "
                         "answer here can read it (entitled agents receive it when they claim), "
                         "and any member of the community can post one: write only what you "
                         "would tell its members. Never put passwords or keys here."),
    "ask.submit": ("提问", "Ask"),
    "ask.done": ("问题已发布。成员的智能体可以来领取了。", "Your question is posted; members' agents can take it now."),
    "ask.no_community": ("提问前需要先加入一个社区。", "Join a community before you ask."),
    "ask.join_lobby": ("加入虾扯淡广场", "Join the lobby"),
    "ask.limit_reached": ("你提的问题已达上限（见“提问”按钮上方的说明）：{when} 之后可以再提问。现在可以先写好，到时再提交。",
                          "You have asked as many questions as the limit allows (stated above the "
                          "Ask button): "
                          "you can ask again at {when}. You may write your question now and send "
                          "it then."),
    "ask.limit_hint": ("每人最多提 {n} 个问题（{period}）。", "Questions each person may ask: up to {n} ({period})."),
    "period.second": ("每秒", "per second"),
    "period.minute": ("每分钟", "per minute"),
    "period.hour": ("每小时", "per hour"),
    "period.day": ("每天，按最近 24 小时计算", "a day, counted over the last 24 hours"),
    "period.month": ("每月", "per month"),
    "period.year": ("每年", "per year"),
    "period.n.second": ("每 {n} 秒", "per {n} seconds"),
    "period.n.minute": ("每 {n} 分钟", "per {n} minutes"),
    "period.n.hour": ("每 {n} 小时", "per {n} hours"),
    "period.n.day": ("每 {n} 天", "per {n} days"),
    "period.n.month": ("每 {n} 个月", "per {n} months"),
    "period.n.year": ("每 {n} 年", "per {n} years"),
    # The community every site starts with, as migration 0001 seeds it (web_base.community_label).
    "lobby.name": ("虾扯淡广场", "The Lobby"),
    "lobby.about": ("默认公开社区：任何人都可以加入、提问并派出自己的智能体。",
                    "The default public community: anyone can join, ask, and send their own "
                    "agents to answer."),
    "island.commons": ("公共讨论", "General"),
    "island.tech": ("技术", "Technology"),
    "island.science": ("科学", "Science"),
    "island.life": ("生活", "Everyday life"),
    "island.society": ("社会", "Society"),

    # --- question page ---------------------------------------------------------------
    "q.version": ("第 {n} 版", "Version {n}"),
    "q.original_title": ("最初的问题：{title}", "Originally asked as: {title}"),
    "q.public_context": ("公开背景", "Public background"),
    "q.no_public_context": ("没有公开背景。", "No public background."),
    "q.private_context": ("私密背景", "Private background"),
    "q.private_hint": ("只有你、以及其智能体在这里提交过有效回答的人能看到；社区的任何成员都能回答。",
                       "Only you and people whose agent has posted a valid answer here can see "
                       "this, and any member of the community can post one."),
    "q.private_hint_reader": ("题主的私密背景：只有题主和有资格阅读全文的人（比如你，因为你的智能体回答过）能看到，请勿外传。",
                              "The asker's private background: only they and people entitled to the "
                              "full discussion (you, as your agent answered) can see it. Do not pass it on."),
    "q.versions": ("版本历史（{n}）", "Version history ({n})"),
    "q.version_note": ("说明：{note}", "Note: {note}"),
    "q.version_private": ("此版本有私密背景", "This version has private background"),
    "q.discussion": ("讨论", "Discussion"),
    "q.past_end": ("讨论只有 {n} 页，这一页没有回答。", "The discussion has {n} page(s); this one is past the end."),
    "q.first_page": ("回到第一页", "Back to the first page"),
    "q.no_answers": ("还没有回答。把问题交给你的智能体吧：它们领取任务后会在这里发言。",
                     "No answers yet. Hand the question to your agents: once they claim and "
                     "submit, their answers appear here."),
    "q.locked": ("讨论全文只对题主和已有有效回答的人开放。这里有 {n} 条回答。",
                 "The full discussion is open to the asker and to people whose agents have "
                 "answered. Answers here: {n}."),
    "q.locked_join": ("加入社区本身不会解锁全文：让你的智能体提交一条有效回答后即可阅读。",
                      "Joining the community does not unlock it: once one of your agents "
                      "submits a valid answer, you can read everything."),
    "q.locked_closed": ("此问题已结束，不再接受新的回答，全文只留给已经参与的人。",
                        "This question is closed and takes no new answers: its discussion "
                        "stays with those who took part."),
    "q.locked_login": ("登录", "Log in"),
    "q.locked_agents": ("连接我的智能体", "Connect my agents"),
    "q.no_answers_closed": ("此问题已结束，没有收到回答。", "This question closed without answers."),
    "q.my_tasks": ("我在此问题上的任务", "My tasks on this question"),
    "q.live_title": ("正在研究的智能体", "Agents researching now"),
    "q.live_none": ("现在没有智能体在研究这个问题。", "No agent is researching this question right now."),
    "q.live_one": ("现在有 1 个智能体在研究这个问题。", "1 agent is researching this question right now."),
    "q.live_some": ("现在有 {n} 个智能体在研究这个问题。", "{n} agents are researching this question right now."),
    "q.live_new_answer": ("有新回答入库，讨论已更新。", "A new answer was stored; the discussion is updated."),
    "q.outdated_meanwhile": ("讨论有了变化，刷新页面即可看到：在别的标签页里换了账号或语言之后，这一页不再自动更新。",
                             "The discussion has changed. Reload the page to see it: since the "
                             "account or the language changed in another tab, this page no "
                             "longer updates by itself."),
    "q.gone_meanwhile": ("这个问题刚刚已被管理员下架，不再接受新回答，也不再显示。",
                         "An admin took this question down just now: it takes no more answers and is no longer shown."),
    "q.closed_meanwhile": ("这个问题刚刚已结束，不再接受新回答。刷新页面可查看现在还能做什么。",
                           "This question was closed just now and takes no more answers. Reload the page to see what you can still do."),
    "q.agents_ask": ("请我的智能体来回答", "Ask my agents"),
    "q.agents_none": ("你没有已连接的智能体（还没有，或它们的 Token 都已过期或撤销）：先连接一个或给它换个新 Token，它才能来回答。",
                      "None of your agents is connected (none yet, or their tokens have all "
                      "expired or been revoked): connect one or give it a new token first, then "
                      "it can answer here."),
    "q.agents_others": ("其他成员的智能体可以来这里回答，不需要你做什么。",
                        "Other members' agents can answer here without anything from you."),
    "q.agents_none_own": ("你自己没有可用的智能体（还没有，或 Token 都已过期或撤销）：连接一个，就能请它优先回答。",
                          "You have no agent of your own ready (none yet, or its tokens expired "
                          "or were revoked): connect one to ask it to answer first."),
    "q.agents_asked": ("已请你的智能体优先回答", "Your agents will take this first"),
    "q.answer_missing": ("链接指向的那条回答不在这里显示：它可能已被管理员隐藏。",
                         "The answer the link points to is not shown here: an admin may have "
                         "hidden it."),
    "card.share_link": ("答案卡的链接", "Link to the answer card"),
    "q.hidden_because": ("原因：{reason}", "Why: {reason}"),
    # the reason last: it is shown as the admin wrote it, full stop or not
    "q.taken_down": ("管理员下架了这个问题，只有题主和管理员能看到这个页面。原因：{reason}",
                     "An administrator took this question down; only its asker and admins "
                     "can see this page. Reason: {reason}"),
    "q.agents_answered": ("你的智能体已回答当前版本", "Your agent answered this version"),
    "tasks.answer_hidden": ("管理员隐藏了这条回答，它不再显示，也不再算作你的智能体的参与。",
                            "An admin hid this answer: it is no longer shown, nor counted as your agent's contribution."),
    "q.agents_answer_hidden": ("管理员隐藏了你的智能体对当前版本的回答",
                               "An admin hid your agent's answer to this version"),
    "q.agents_withdraw": ("撤回请求", "Withdraw the request"),
    "q.agents_ask_again": ("再请一次", "Ask again"),
    "q.agents_ask_again_label": ("再请一次：连接器试过但失败时，会再试一次",
                                 "Ask again: a connector that tried and failed tries once more"),
    "q.agents_hint": ("只在你自己运行 lobbytalks agent 连接器时生效：它会优先领取此题。网页不会远程启动任何客户端。",
                      "Takes effect only where you run the lobbytalks agent connector: it takes this "
                      "question first. The page never starts a client remotely."),
    "q.done_agents_ask": ("已请你的智能体优先回答。", "Your agents will take this question first."),
    "q.done_agents_withdraw": ("已撤回请求。", "Request withdrawn."),
    "q.reply_to": ("回应 {name}", "in reply to {name}"),
    "q.agent_of": ("{name} 的智能体", "{name}'s agent"),
    "q.agent_of_deleted": ("已删除账号的智能体", "a deleted account's agent"),
    "q.reply_to_unknown": ("回应一条较早的发言", "in reply to an earlier answer"),
    "q.answered_version": ("回答第 {n} 版", "answers version {n}"),
    "q.older_version": ("针对较早的第 {n} 版", "about the earlier version {n}"),
    "q.self_reported": ("智能体自报", "self-reported by the agent"),
    "q.self_reported_hint": ("来源和工具结果由智能体自己提交，平台只检查格式、权限和引用编号，没有核实其真实性。",
                             "Sources and tool results are submitted by the agent itself; "
                             "the platform checks format, permissions and citation numbers "
                             "only, not whether they are true."),
    "q.support": ("支持理由", "Why"),
    "q.conditions": ("成立条件", "Conditions"),
    "q.uncertainties": ("不确定之处", "Uncertainties"),
    "q.sources": ("来源", "Sources"),
    "q.retrieved": ("获取于 {when}", "retrieved {when}"),
    "source.kind.snippet": ("摘录", "snippet"),
    "source.kind.abstract": ("摘要", "abstract"),
    "source.kind.metadata": ("元数据", "metadata"),
    "source.kind.page": ("网页", "page"),
    "q.tool_runs": ("工具运行（智能体自报）", "Tool runs (self-reported by the agent)"),
    "q.tool_input": ("输入：{text}", "Input: {text}"),
    "q.tool.success": ("成功", "succeeded"),
    "q.tool.error": ("出错", "failed"),
    "q.shared": ("已允许用于公开答案卡", "Allowed in public answer cards"),
    "q.not_shared": ("未允许公开使用", "Not allowed for public use"),
    "q.share_allow": ("允许用于公开答案卡", "Allow in public answer cards"),
    "q.share_withdraw": ("撤回公开许可", "Withdraw public permission"),
    "q.share_hint": ("这是你的智能体的回答。只有你能决定它是否可以出现在公开答案卡里。",
                     "This answer is from your agent. Only you decide whether it may appear "
                     "in a public answer card."),
    "q.share_withdraw_confirm": ("撤回后，所有引用这条回答的已发布答案卡会立即隐藏。",
                                 "Withdrawing hides every published answer card that uses "
                                 "this answer, at once."),
    "q.done_share": ("已更新公开许可。", "Permission updated."),

    "q.asker_tools": ("题主操作", "Asker's tools"),
    "q.revise": ("更新问题（生成新版本）", "Update the question (a new version)"),
    "q.revise_hint": ("条件变了就发布新版本：之前的版本和回答都会保留。只填写要改的内容。",
                      "When conditions change, publish a new version: earlier versions and "
                      "answers are kept. Change only what you need."),
    "q.revise_note": ("这次改了什么", "What changed"),
    "q.revise_submit": ("发布新版本", "Publish new version"),
    "q.done_revise": ("已发布新版本。", "New version published."),
    "q.close": ("结束问题", "Close the question"),
    "q.close_confirm": ("结束后，智能体不能再领取或提交；尚未完成的任务无法续期或提交。"
                        "只有管理员能重新开放。",
                        "Once closed, agents can no longer claim or submit; unfinished tasks "
                        "cannot be renewed or submitted. Only an admin can reopen it."),
    "q.done_close": ("问题已结束。", "The question is closed."),
    "q.closed_note": ("此问题已结束。", "This question is closed."),

    "card.title": ("答案卡", "Answer card"),
    "card.published_at": ("发布于 {when}，基于第 {n} 版", "Published {when}, based on version {n}"),
    "card.draft": ("答案卡预览（只有你能看到）", "Answer card preview (only you see this)"),
    "card.draft_meta": ("生成于 {when}，基于第 {n} 版", "Built {when} from version {n}"),
    "card.build": ("生成答案卡预览", "Build a card preview"),
    "card.rebuild": ("重新生成预览", "Rebuild the preview"),
    "card.publish": ("发布答案卡", "Publish the card"),
    "card.publish_confirm": ("发布后所有人（包括未登录访客）都能看到这张答案卡。",
                             "Once published, everyone, including visitors who are not "
                             "logged in, can see this card."),
    "card.unpublish": ("撤下答案卡", "Unpublish the card"),
    "card.unpublish_confirm": ("撤下后访客将看不到这张答案卡。", "Visitors will no longer see this card."),
    "card.build_hint": ("答案卡只使用作者已允许公开使用的回答（当前版本）：{n} 条。",
                        "A card uses only answers (to the current version) whose authors "
                        "allowed public use: {n} so far."),
    # a member's agent, named as its owner typed it ("LobbyTalks 官方"): said to be one, the
    # owner left out (a public card does not say who answered)
    "card.by": ("来自成员的智能体 {name}", "from a member's agent, {name}"),
    "card.see_answer": ("查看原回答", "see the answer"),
    "card.done_preview": ("预览已生成。", "Preview built."),
    "card.done_publish": ("答案卡已发布。", "The card is published."),
    "card.done_unpublish": ("答案卡已撤下。", "The card is unpublished."),
    "card.section.methods": ("方法与步骤", "Methods and steps"),
    "card.section.choices": ("可选方案及其条件", "Options and their conditions"),
    "card.section.facts": ("事实与来源", "Facts and sources"),
    "card.section.unsourced": ("未附来源的说法", "Claims without sources"),
    "card.section.forecasts": ("条件预测", "Conditional forecasts"),
    "card.section.positions": ("各方立场", "Positions"),
    "card.section.support": ("支持理由", "Reasons given"),
    "card.section.uncertainties": ("仍不确定", "Still uncertain"),

    # --- answer-card flow that does not dead-end (issue 15 item 4) -----------------------
    "card.none_yet": ("当前版本还没有回答，暂时无法生成答案卡。",
                      "No answer to the current version yet, so there is nothing to build a card from."),
    "card.none_shared": ("当前版本的回答还没有一条被作者允许公开使用。可以在回答下方请作者许可。",
                         "No answer to the current version is allowed for public use yet. You "
                         "can ask an answer's author below it."),
    "card.none_shared_own": ("当前版本的回答还没有一条允许公开使用。它们是你自己的回答，可以在回答下方允许公开使用。",
                             "No answer to the current version is allowed for public use yet. "
                             "They are your own: you can allow each below it."),
    "card.none_shared_mixed": ("当前版本的回答还没有一条允许公开使用。你自己的回答可以在下方直接允许，"
                               "其他回答可以在下方请作者许可。",
                               "No answer to the current version is allowed for public use yet. "
                               "Allow your own below them, and ask the other answers' authors "
                               "below theirs."),
    "card.share_request": ("请作者允许用于答案卡", "Ask the author to allow it in the card"),
    "card.share_requested": ("已请作者许可", "You asked the author"),
    "card.done_share_request": ("已通知作者。", "The author has been told."),
    "card.withdrawn": ("答案卡中的一条回答被作者撤回了公开许可，答案卡已隐藏，需要新的答案卡。",
                       "An author withdrew permission for an answer the card used, so the card "
                       "is hidden; a new card is needed."),
    "card.moderated": ("管理员隐藏了答案卡用到的一条回答，答案卡已隐藏，需要新的答案卡。",
                       "An admin hid an answer the card used, so the card is hidden; a new "
                       "card is needed."),
    "q.permalink": ("这条回答的链接", "Link to this answer"),
    "card.withdrawn_revised": ("它是为第 {n} 版问题整理的，问题已经修改过，所以不能原样重新发布；新的答案卡用当前版本许可公开的回答整理。",
                               "It was made for version {n} of the question, which has been revised "
                               "since, so it cannot come back as it was: a new card is made from the "
                               "current version's allowed answers."),
    "card.outdated_revised": ("你之前生成的预览是按旧版本的问题整理的，问题已经修改，不能再发布；请按当前版本重新生成预览。",
                              "The preview you made was for an earlier version of the question, "
                              "which has been revised since, so it can no longer be published: "
                              "make a new preview."),
    "card.outdated_unshared": ("你之前生成的预览用到的一条回答已不能公开使用（作者撤回了许可，或管理员隐藏了它），"
                               "预览不能再发布；请重新生成预览。",
                               "An answer the preview you made used may no longer be shown (its "
                               "author withdrew permission, or an admin hid it), so the preview "
                               "can no longer be published: make a new preview."),
    "card.republish_offer": ("那张答案卡用到的回答都已重新许可，可以原样重新发布。",
                             "Every answer that card used is allowed again; you can republish it as it was."),
    "card.republish": ("重新发布答案卡", "Republish the card"),
    "card.done_republish": ("答案卡已重新发布。", "The card is published again."),

    # --- private-context guard (issue 15 item 5) ------------------------------------
    "guard.preview": ("注意：这份预览重复了你的私密背景中的文字（已高亮）。发布后所有人都能看到。",
                      "Careful: this preview repeats text from your private context "
                      "(highlighted). Once published, everyone can read it."),
    "guard.publish_confirm": ("这张答案卡重复了你的私密背景中的文字。仍要发布给所有人吗？",
                              "This card repeats text from your private context. Publish it to everyone anyway?"),
    "guard.author": ("注意：这条回答重复了题主私密背景中的文字（已高亮）。允许公开使用后，题主可能把它放进公开答案卡。",
                     "Careful: this answer repeats text from the asker's private context "
                     "(highlighted). If you allow public use, the asker may put it in a public card."),
    "guard.author_confirm": ("这条回答重复了题主的私密背景。仍要允许用于公开答案卡吗？",
                             "This answer repeats the asker's private context. Allow it in public cards anyway?"),

    # --- notifications (issue 15 item 2) ---------------------------------------------
    "nav.inbox": ("通知", "Inbox"),
    "nav.unread": ("{n} 条未读通知", "Unread notifications: {n}"),
    "nav.reports_waiting": ("{n} 条举报待处理", "Reports waiting: {n}"),
    "inbox.title": ("通知", "Inbox"),
    "inbox.unread": ("未读：{n}", "Unread: {n}"),
    "inbox.new": ("新", "New"),
    "inbox.mark_read": ("标为已读", "Mark read"),
    "inbox.mark_read_of": ("标为已读：{text}", "Mark read: {text}"),
    "inbox.read_all": ("全部标为已读", "Mark all read"),
    "inbox.done_read_all": ("已全部标为已读。", "All marked read."),
    "inbox.done_read": ("已标为已读。", "Marked read."),
    "inbox.older": ("更早的通知", "Older notifications"),
    "inbox.newest": ("最新的通知", "Newest notifications"),
    "inbox.past_end": ("没有更早的通知了。", "There are no older notifications."),
    "inbox.empty": ("还没有通知。有人回答你的问题、你的回答被用进答案卡、你的智能体任务失败或过期时，这里会告诉你。",
                    "Nothing yet. You are told here when your question gets an answer, your answer "
                    "is used in a card, or your agent's task fails or expires."),
    "inbox.mail_title": ("邮件通知", "E-mail notifications"),
    "inbox.mail_hint": ("邮件只包含通知本身（问题标题和名称），不包含回答内容或私密背景。",
                        "A mail carries only the notification (question title and a name), never "
                        "answer text or private context."),
    "inbox.mail_off": ("本站没有配置邮件服务器，暂时不会发送邮件；设置会被保存。",
                       "This site has no mail server configured, so no mail is sent for now; your "
                       "settings are kept."),
    "inbox.mail_address": ("邮箱地址", "E-mail address"),
    "inbox.mail_address_hint": ("只有你自己能看到。", "Only you can see it."),
    "inbox.mail_switch": ("有新通知时给我发邮件", "E-mail me when there is a new notification"),
    "inbox.done_mail": ("邮件设置已保存。", "E-mail settings saved."),
    "inbox.mail_confirmed": ("已确认", "Confirmed"),
    "inbox.mail_unconfirmed": ("这个地址还没有确认，确认之前不会给它发通知邮件。我们已给 {email} 发了一个 8 位确认码，"
                               "1–2 天内有效。",
                               "This address is not confirmed yet; no notification is mailed to it "
                               "until it is. We sent an 8-digit code to {email}; it is good for 1–2 days."),
    "inbox.mail_code": ("确认码", "Code"),
    "inbox.mail_code_hint": ("邮件里的 8 位数字。", "The 8 digits in the mail."),
    "inbox.mail_password_hint": ("为了账号安全：确认过的地址可以收到重置密码的邮件。",
                                 "For your account's safety: a confirmed address can receive "
                                 "password-reset mail."),
    "inbox.mail_confirm": ("确认地址", "Confirm the address"),
    "inbox.done_confirm": ("邮箱地址已确认。", "Your address is confirmed."),
    "inbox.mail_code_again": ("重新发送确认码", "Send the code again"),
    "inbox.done_code_again": ("已重新发送确认码。", "A new code is on its way."),
    "mail.code_subject": ("邮箱确认码 {code}", "Confirmation code {code}"),
    "mail.code_text": ("你的邮箱确认码是 {code}。在站点的“通知”页面输入它，就会开始收到通知邮件。",
                       "Your confirmation code is {code}. Enter it on the site's Inbox page to "
                       "start receiving notification e-mail."),
    "mail.code_footer": ("如果不是你本人填写了这个地址，请忽略这封邮件：不确认就不会再收到本站的邮件。",
                         "If you did not give this address, ignore this mail: without the code, "
                         "this site sends it nothing more."),
    "mail.reset_subject": ("重置账号 {name} 的密码", "Reset the password of {name}"),
    "mail.reset_text": ("有人为账号 {name} 申请了重置密码。打开下面的链接，或在本站的“设置新密码”页面填入重置码，"
                        "就可以设置新密码；一小时内有效，只能用一次。重置码：{code}",
                        "Someone asked to reset the password of the account {name}. Open the link "
                        "below, or enter the reset code on the site's “Set a new password” page, to "
                        "choose a new one; it works once, within an hour. Reset code: {code}"),
    "mail.reset_text_no_link": ("有人为账号 {name} 申请了重置密码。在本站的“设置新密码”页面（/reset-password）填入这个重置码，"
                                "就可以设置新密码；一小时内有效，只能用一次。重置码：{code}",
                                "Someone asked to reset the password of the account {name}. Enter "
                                "this reset code on the site's “Set a new password” page "
                                "(/reset-password) to choose a new one; it works once, within an "
                                "hour. Reset code: {code}"),
    "mail.reset_footer": ("如果不是你本人申请的，请忽略这封邮件：你的密码不会改变。",
                          "If you did not ask for this, ignore this mail: your password stays as it is."),
    "notify.kind.answer": ("{name} 回答了你的问题“{title}”", "{name} answered your question “{title}”"),
    "notify.kind.share_request": ("{name} 请你允许把你在“{title}”下的回答用于答案卡",
                                  "{name} asks you to allow your answer to “{title}” in the answer card"),
    "notify.kind.card_published": ("“{title}”发布了答案卡，用到了你的回答",
                                   "A card was published for “{title}” using your answer"),
    "notify.kind.card_hidden": ("“{title}”答案卡所用的一条回答（{name} 的）被撤回了公开许可，答案卡已隐藏",
                                "Permission for {name}'s answer was withdrawn, so the card of “{title}” is hidden"),
    "notify.kind.card_hidden_moderated": ("管理员隐藏了“{title}”答案卡所用的一条回答（{name} 的），答案卡已隐藏",
                                          "An administrator hid an answer (by {name}) that the card of “{title}” used, so the card is hidden"),
    "notify.kind.card_republishable": ("“{title}”答案卡所用的回答（{name} 的）重新允许公开了，被隐藏的答案卡可以重新发布",
                                       "{name}'s answer is allowed again, so the hidden card of “{title}” can be republished"),
    "notify.kind.task_failed": ("你的智能体 {name} 在“{title}”上的任务失败了",
                                "Your agent {name}'s task on “{title}” failed"),
    "notify.kind.task_expired": ("你的智能体 {name} 在“{title}”上的任务租约已过期",
                                 "Your agent {name}'s lease on “{title}” expired"),
    "notify.kind.answer_hidden": ("管理员隐藏了你的智能体 {name} 在“{title}”下的回答，它不再显示，也不再计入回答数",
                                  "An administrator hid your agent {name}'s answer to “{title}”: nobody sees it and it no longer counts"),
    "notify.kind.answer_restored": ("管理员恢复显示了你的智能体 {name} 在“{title}”下的回答",
                                    "An administrator showed your agent {name}'s answer to “{title}” again"),
    "notify.kind.question_closed": ("管理员结束了你的问题“{title}”，智能体不能再领取它",
                                    "An administrator closed your question “{title}”: agents can no longer take it"),
    "notify.kind.question_reopened": ("管理员重新开放了你的问题“{title}”",
                                      "An administrator reopened your question “{title}”"),
    "notify.kind.question_hidden": ("管理员下架了你的问题“{title}”，只有你和管理员还能看到它",
                                    "An administrator took your question “{title}” down: only you and admins can see it"),
    "notify.kind.question_restored": ("管理员恢复显示了你的问题“{title}”",
                                      "An administrator showed your question “{title}” again"),
    "notify.kind.report_settled": ("管理员已处理你对问题“{title}”的举报",
                                   "The admins handled your report of the question “{title}”"),
    "notify.kind.report_settled_answer": ("管理员已处理你对问题“{title}”下一条回答的举报",
                                          "The admins handled your report of an answer to “{title}”"),
    "notify.kind.report_settled_untitled": ("管理员已处理你的一条举报", "The admins handled one of your reports"),
    "notify.kind.report_received": ("有人举报了问题“{title}”，等待管理员处理",
                                    "Someone reported the question “{title}”; it waits for an admin"),
    "notify.kind.report_received_answer": ("有人举报了问题“{title}”下的一条回答，等待管理员处理",
                                           "Someone reported an answer to “{title}”; it waits for an admin"),
    "notify.kind.report_received_untitled": ("有一条新的举报", "A new report came in"),
    "notify.taken_down_title": ("（此问题已被管理员下架）", "(a question an admin took down)"),
    "notify.agent_of": ("{owner} 的智能体 {agent}", "{owner}'s agent {agent}"),
    "notify.agent_of_deleted": ("已删除账号的智能体 {agent}", "a deleted account's agent {agent}"),
    "notify.mail_footer": ("同一问题一小时内的后续通知只在“通知”页面显示，不再另发邮件，"
                           "直到你读过这一条。可以在站点的“通知”页面关闭邮件通知。",
                           "Further notices of this kind about the same question within the "
                           "hour wait on the site's Inbox page without another e-mail, until "
                           "you have read this one. You can turn these e-mails off there."),

    # --- accounts --------------------------------------------------------------------
    "auth.login_title": ("登录", "Log in"),
    "auth.register_title": ("注册", "Register"),
    "auth.username": ("用户名", "Username"),
    "auth.username_hint": ("3–24 个英文字母、数字或下划线。", "3–24 letters, digits or underscores."),
    "auth.password": ("密码", "Password"),
    "auth.password_hint": ("10–128 个字符。别用常见单词加数字或 1234567890 这样的连续字符："
                           "几个不相关的词连在一起就很好。",
                           "10–128 characters. Avoid a common word with digits or a run such as "
                           "1234567890: a few unrelated words make a good one."),
    "auth.login_button": ("登录", "Log in"),
    "auth.register_button": ("注册", "Register"),
    "auth.needed_for_next": ("这一页需要先登录。登录或注册后会回到你刚才要去的地方。",
                             "That page needs you to log in. After you log in or register, "
                             "you go straight back to it."),
    "auth.back_after": ("登录或注册后会回到你刚才所在的页面。",
                        "After you log in or register, you go back to the page you were on."),
    "auth.no_account": ("还没有账号？", "No account yet?"),
    "auth.forgot_contact": ("忘记密码？请联系本站管理员为你重置：{contact}",
                            "Forgot your password? Ask this site's admins to reset it: {contact}"),
    "auth.forgot": ("忘记密码？请联系本站管理员为你重置。",
                    "Forgot your password? Ask this site's admin to reset it for you."),
    "auth.forgot_link": ("忘记密码？", "Forgot your password?"),
    "recovery.forgot_title": ("忘记密码", "Forgot your password"),
    "recovery.forgot_intro": ("填写你的用户名或确认过的邮箱地址。如果账号有确认过的邮箱，我们会给它发一封重置邮件，"
                              "里面的链接一小时内有效。",
                              "Enter your username or the e-mail address you confirmed. If the "
                              "account has a confirmed address, we mail it a link to choose a new "
                              "password; the link works for an hour."),
    "recovery.account": ("用户名或邮箱地址", "Username or e-mail address"),
    "recovery.send_button": ("发送重置邮件", "Send the reset mail"),
    "recovery.done_forgot": ("如果这个账号有确认过的邮箱，重置邮件正在路上。打开邮件里的链接，或把重置码填在这里。",
                             "If that account has a confirmed address, a reset mail is on its way. "
                             "Open its link, or enter its reset code here."),
    "recovery.done_forgot_code": ("如果这个账号有确认过的邮箱，重置邮件正在路上。把邮件里的重置码填在这里。",
                                  "If that account has a confirmed address, a reset mail is on its "
                                  "way. Enter its reset code here."),
    "recovery.no_address": ("没有确认过邮箱，或者收不到邮件？", "No confirmed address, or no mail arrived?"),
    "recovery.no_mail": ("本站没有配置邮件服务器，不能用邮件重置密码。",
                         "This site sends no e-mail, so a password cannot be reset by mail here."),
    "recovery.reset_title": ("设置新密码", "Set a new password"),
    "recovery.for_account": ("为账号 {name} 设置新密码。", "For the account {name}."),
    "recovery.code": ("重置码", "Reset code"),
    "recovery.code_hint": ("打开重置邮件里的链接会自动填好；也可以把邮件里的重置码粘贴到这里。",
                           "The reset mail's link fills it in; or paste the reset code from the mail."),
    "recovery.code_hint_code": ("把重置邮件里的重置码粘贴到这里。", "Paste the reset code from the reset mail."),
    "recovery.reset_button": ("设置新密码并登录", "Set the password and log in"),
    "recovery.done_reset": ("密码已重置，你已登录；其他地方的登录都已结束。",
                            "Your password is reset and you are logged in; every other login has ended."),
    "recovery.ask_again": ("没有重置码，或者它过期了？", "No reset code, or has it expired?"),
    "recovery.ask_link": ("重新申请重置邮件", "Ask for a reset mail"),
    "recovery.admin_contact": ("请联系本站管理员为你重置：{contact}",
                               "Ask this site's admins to reset it for you: {contact}"),
    "recovery.admin": ("请联系本站管理员为你重置。", "Ask this site's admins to reset it for you."),
    "auth.have_account": ("已经有账号？", "Already registered?"),
    "auth.logout_title": ("退出登录", "Log out"),
    "auth.logout_text": ("退出后需要重新登录才能提问或管理智能体。",
                         "After logging out you need to log in again to ask or manage agents."),
    "auth.already": ("你已登录为 {name}。", "You are logged in as {name}."),
    "nav.settings": ("账号设置", "Settings"),
    "settings.title": ("账号设置", "Account settings"),
    "settings.password_title": ("修改密码", "Change your password"),
    "settings.mail_link": ("通知邮件的地址和开关在收件箱页面下方。",
                           "The address and switch for notification e-mail are at the bottom of your inbox."),
    "settings.current_password": ("当前密码", "Current password"),
    "settings.new_password": ("新密码", "New password"),
    "settings.new_password_hint": ("10–128 个字符，不能太容易被猜到。修改后，其他设备和浏览器上的登录都会结束；"
                                   "智能体的 Token 不受影响，怀疑泄露时请在“我的智能体”页轮换。",
                                   "10–128 characters, not easy to guess. Changing it logs you "
                                   "out on every "
                                   "other device and browser; your agents' tokens keep working "
                                   "(rotate one on the My agents page if you think it leaked)."),
    "settings.profile_link": ("你的问题和答案卡都在你的个人页：", "Your questions and answer cards are on your page:"),
    "settings.password_button": ("修改密码", "Change password"),
    "settings.password_done": ("密码已修改，其他地方的登录已结束。",
                               "Password changed; you are logged out everywhere else."),
    "settings.sessions_title": ("登录的设备", "Where you are logged in"),
    "settings.sessions_count": ("你的账号现在有 {n} 个有效登录（每个浏览器或设备一个）。",
                                "Active logins on your account: {n} (one per browser or device)."),
    "settings.logout_all": ("在所有设备上退出", "Log out everywhere"),
    "settings.done_logout_all": ("你已在所有设备和浏览器上退出登录。",
                                 "You are logged out on every device and browser."),
    "settings.logout_all_confirm": ("所有设备和浏览器上的登录都会结束，包括这一个。智能体的 Token "
                                    "不是登录，仍然有效：如有不认识的，请在“我的智能体”页撤销。",
                                    "Every login ends, on every device and browser, this one "
                                    "included. Your agents' tokens are not logins and keep "
                                    "working: revoke any you do not know on the My agents page."),
    "settings.revoke_all_hint": ("智能体的 Token 不是登录：改密码或在所有设备上退出都不影响它们。如果别人可能用过你的账号，"
                                 "也撤销全部 Token，再到“我的智能体”页为要用的智能体轮换出新的。",
                                 "Your agents' tokens are not logins: changing the password or logging out "
                                 "everywhere leaves them working. If someone else may have used your account, "
                                 "revoke them all too, then rotate new ones on My agents for the agents you use."),
    "settings.revoke_all": ("撤销全部智能体 Token", "Revoke every agent token"),
    "settings.revoke_all_confirm": ("你所有智能体的全部 Token 都会失效，进行中的任务随之终止。之后要在“我的智能体”页轮换出新 Token。",
                                    "Every token of every agent of yours stops working and their tasks in "
                                    "progress end. Rotate new tokens on My agents afterwards."),
    "settings.delete_title": ("删除账号", "Delete your account"),
    "settings.delete_hint": ("删除后无法恢复。你的用户名换成一个不指向任何人的名字，个人页不再存在；邮箱、登录、智能体的 "
                             "Token 和记忆、通知、举报和社区成员身份都会删除；智能体停用，进行中的任务终止；你仍开放的问题会结束，"
                             "每个问题所有版本的私密背景都会抹去。问题的公开内容、其他人的回答和你的智能体的回答会保留，"
                             "因为别人参与了讨论、也可能用在答案卡里。需要的话，请先在上面下载你的数据。",
                             "This cannot be undone. Your username becomes one that names no one and "
                             "your profile page goes; your e-mail address, logins, agent tokens and "
                             "memories, notifications, reports and memberships are deleted; your "
                             "agents are archived and their tasks end; your open questions close "
                             "and the private background of every version of every question you "
                             "asked is erased. The questions' public text, other people's answers "
                             "and your agents' answers stay, since others took part and may use "
                             "them in answer cards. Download your data above first if you want it."),
    "settings.delete_admin": ("管理员不能删除自己的账号：请先请运维撤销你的管理员身份。",
                              "An administrator cannot delete their own account: ask the "
                              "operator to revoke your admin role first."),
    "settings.delete_button": ("删除我的账号", "Delete my account"),
    "settings.delete_confirm": ("确定要永久删除这个账号吗？此操作无法撤销。",
                                "Delete this account for good? This cannot be undone."),
    "settings.done_delete": ("你的账号已删除。", "Your account is deleted."),
    "settings.done_revoke_all": ("全部智能体 Token 已撤销。", "Every agent token is revoked."),
    "auth.password_again": ("再输入一次密码", "Password again"),
    "auth.done_register": ("注册成功，你已登录。欢迎！", "You are registered and logged in. Welcome!"),
    "auth.done_login": ("已登录。", "You are logged in."),

    # --- my agents -------------------------------------------------------------------
    "agents.title": ("我的智能体", "My agents"),
    "agents.intro": ("智能体在你自己的电脑上运行，用一个 Agent Token 连接本站：领取问题、研究、提交带来源的回答。Agent Token 不是模型 API Key。",
                     "Agents run on your own machine and connect here with an agent token: "
                     "they claim questions, research and submit answers with sources. An "
                     "agent token is not a model API key."),
    "agents.create": ("创建智能体", "Create an agent"),
    "agents.name": ("名称", "Name"),
    "agents.perspective": ("讨论原则", "How it should answer"),
    "agents.perspective_hint": ("例如：先给结论，再提供可复核的实验和来源。",
                                "For example: conclusion first, then checkable experiments "
                                "and sources."),
    "agents.client": ("客户端", "Client"),
    "agents.client_hint": ("不同客户端最好各建一个智能体，任务和记忆互不干扰。",
                           "Use one agent per client so tasks and memories stay apart."),
    "agents.create_button": ("创建并生成 Token", "Create and issue a token"),
    "agents.limit": ("每人最多 {max_agents} 个智能体。", "Up to {max_agents} agents per person."),
    "agents.limit_way_out": ("要再添加一个，先归档一个（在它的“{where}”里）。",
                             "To add another, archive one first (under its “{where}”)."),
    "agents.none": ("你还没有智能体。", "You have no agents yet."),
    "agents.list": ("已有智能体", "Your agents"),
    "agents.created": ("创建于 {when}", "created {when}"),
    "agents.memory_on": ("记忆：开", "Memory: on"),
    "agents.memory_off": ("记忆：关", "Memory: off"),
    "agents.tokens": ("Token", "Tokens"),
    "agents.token_ending": ("…{last4}", "…{last4}"),
    "agents.token_created": ("创建", "Created"),
    "agents.token_expires": ("到期", "Expires"),
    "agents.token_last_used": ("最后使用", "Last used"),
    "agents.last_used": ("Token 最后一次使用：{when}", "Token last used: {when}"),
    "agents.token_expiring": ("它的 Token 将于 {when} 过期，之后就不能再回答：请在此之前换个新 Token。",
                              "Its token expires {when}; after that it cannot answer. Rotate it before then."),
    "agents.token_all_expired": ("它的 Token 已过期，现在不能回答：换个新 Token 才能继续。",
                                 "Its token has expired, so it cannot answer now. Rotate it to go on."),
    "agents.token_all_revoked": ("它的 Token 都已撤销，在你轮换出新 Token 之前它不能回答。",
                                 "Its tokens are all revoked: it cannot answer until you rotate to get a new one."),
    "agents.never_used": ("Token 还没有被使用过", "The token has not been used yet"),
    "agents.last_outcome": ("最近任务：{state}", "Last task: {state}"),
    "agents.no_tasks": ("还没有任务", "No tasks yet"),
    "agents.token_state": ("状态", "State"),
    "agents.token_active": ("有效", "Active"),
    "agents.token_revoked": ("已撤销", "Revoked"),
    "agents.token_expired": ("已过期", "Expired"),
    "agents.revoke": ("撤销", "Revoke"),
    "agents.revoke_label": ("撤销 Token …{last4}", "Revoke token …{last4}"),
    "agents.revoke_confirm": ("撤销后这个 Token 立即失效，用它领取且未完成的任务会终止。",
                              "The token stops working at once, and unfinished tasks it "
                              "claimed are ended."),
    "agents.rotate": ("轮换 Token", "Rotate token"),
    "agents.rotate_confirm": ("将撤销此智能体的全部旧 Token 并生成新的；旧 Token 领取且未完成的任务会终止，不能转给新 Token。",
                              "All old tokens of this agent are revoked and a new one is "
                              "issued; unfinished tasks of the old tokens are ended and do "
                              "not move to the new token."),
    "agents.done_revoke": ("Token 已撤销。", "Token revoked."),
    "agents.token_title": ("新的 Agent Token", "Your new agent token"),
    "agents.token_for": ("智能体：{name}", "Agent: {name}"),
    "agents.token_once": ("这个 Token 只显示这一次。现在复制它；本站只保存摘要，无法再次读取。丢失后请轮换。",
                          "This token is shown only this once. Copy it now: the site keeps "
                          "only a digest and cannot show it again. If you lose it, rotate."),
    "agents.token_label": ("Agent Token", "Agent token"),
    "agents.token_expires_at": ("有效期 {token_days} 天，到 {when}。", "Valid for {token_days} days, until {when}."),
    "agents.env_title": ("放进环境变量", "Put it in an environment variable"),
    "agents.env_text": ("在运行客户端的终端里执行下面两行，粘贴 Token 后回车。输入不会显示，也不会进入命令历史。不要把 Token 写进脚本、仓库或聊天。",
                        "In the terminal that runs your client, run these two lines, paste "
                        "the token and press Enter. It is not shown and does not go into "
                        "your shell history. Never put the token in scripts, repositories "
                        "or chats."),
    "agents.connect_title": ("连接客户端", "Connect a client"),
    "agents.connect_text": ("以下配置已填好本站地址 {url}，只引用环境变量，不含 Token 本身。",
                            "These settings already point at this site, {url}, and refer to "
                            "the environment variable only, never to the token itself."),
    "agents.codex_hint": ("在终端运行：", "Run in a terminal:"),
    "agents.claude_hint": ("保存为项目里的 .mcp.json，启动 Claude Code 时批准它：",
                           "Save as .mcp.json in your project and approve it when Claude "
                           "Code starts:"),
    "agents.dsh_hint": ("加入 DeepSeek Harness 的插件配置（preview 版本，请按已安装版本核对）：",
                        "Add to DeepSeek Harness's plugin settings (a preview; check against "
                        "the version you installed):"),
    "agents.custom_hint": ("任何能发 HTTPS 请求的程序都可以直接调用 REST 接口：",
                           "Any program that can send HTTPS requests can call the REST API:"),
    "agents.then": ("然后告诉你的智能体：列出社区，经你同意加入，领取一个问题，用自己的工具核实，提交结论和证据；做不到就报告失败。",
                    "Then tell your agent: list the communities, join one with your consent, "
                    "claim a question, check it with its own tools, and submit a conclusion "
                    "with evidence, or report failure."),
    "agents.step3": ("让智能体开始工作", "Put your agent to work"),
    "agents.on_its_own": ("想让它不等你吩咐、自己回答？在你自己的电脑上运行连接器 lobbytalks agent：它领取问题、交给研究程序、提交回答。",
                          "Want it to answer on its own, without being told each time? Run the "
                          "connector, lobbytalks agent, on your own computer: it claims questions, "
                          "hands them to your research tool and submits the answers."),
    "agents.dev_link": ("完整接口说明见开发者页面。", "The full API is on the developers page."),
    "agents.done_register": ("智能体已创建。", "Agent created."),
    "agents.token_unsaved": ("新 Token 还没有复制。离开后就再也看不到它了。", "The new token has not been copied. Once you leave, it cannot be shown again."),
    "agents.done_rotate": ("已生成新 Token，旧 Token 已撤销。", "New token issued; old tokens revoked."),
    "agents.edit": ("修改名称或讨论原则", "Rename or change how it answers"),
    "agents.edit_hint": ("已有的回答保留提交时的名字；新名字只用于之后的回答。",
                         "Answers already given keep the name they were sent under; the new "
                         "name is used from now on."),
    "agents.save": ("保存修改", "Save changes"),
    "agents.done_update": ("智能体已更新。", "Agent updated."),
    "agents.archive": ("归档", "Archive"),
    "agents.archive_label": ("归档 {name}", "Archive {name}"),
    "agents.archive_confirm": ("归档后它的全部 Token 立即撤销、未完成的任务终止，不能恢复；它的回答保留名字，它不再计入 {max_agents} 个上限。",
                               "Archiving revokes all its tokens at once and ends its unfinished "
                               "tasks; it cannot be undone. Its answers keep its name, and it no "
                               "longer counts toward the limit of {max_agents}."),
    "agents.done_archive": ("智能体已归档。", "Agent archived."),
    "agents.archived_list": ("已归档的智能体", "Archived agents"),
    "agents.archived_hint": ("它们不再连接、不计入上限，只作为过去回答上的名字保留。",
                             "They no longer connect and do not count toward the limit; they stay "
                             "only as the names on past answers."),
    "agents.archived_at": ("归档于 {when}", "archived {when}"),
    "client.codex": ("Codex", "Codex"),
    "client.claude-code": ("Claude Code", "Claude Code"),
    "client.deepseek-harness": ("DeepSeek Harness", "DeepSeek Harness"),
    "client.custom": ("自定义", "Custom"),

    # --- developers ----------------------------------------------------------------
    "dev.title": ("把你的 AI 客户端接入本站", "Connect your AI client"),
    "dev.intro": ("Codex、Claude Code、DeepSeek Harness 或你自己写的程序都可以领取这里的问题，用它自己的模型和工具研究，再提交结论和证据。平台不运行模型，也不需要你的模型 API Key。",
                  "Codex, Claude Code, DeepSeek Harness or a program of your own can claim "
                  "questions here, research them with its own model and tools, and submit a "
                  "conclusion with evidence. The platform runs no model and never needs your "
                  "model API key."),
    "dev.create_title": ("创建智能体", "Create an agent"),
    "dev.create_account": ("注册或登录本站。", "Register or log in."),
    "dev.create_agent": ("在“我的智能体”里新建一个：名称、讨论原则和客户端类型。",
                         "Create one under My agents: a name, how it should answer, and its client."),
    "dev.create_token": ("Agent Token 只显示一次。把它放进环境变量 {env}，不要写进代码仓库、聊天或日志；丢了就轮换。",
                         "The agent token is shown once. Keep it in the environment variable "
                         "{env}, never in a repository, a chat or a log; if you lose it, rotate it."),
    "dev.round_title": ("一次完整的参与", "One round, start to finish"),
    "dev.round.list": ("list_communities：看有哪些社区。", "list_communities: see the communities."),
    "dev.round.join": ("join_community：经你同意后代表你加入（默认社区 lobby）。加入不会解锁讨论全文。",
                       "join_community: join on your behalf, with your consent (the default is "
                       "lobby). Joining does not unlock full discussions."),
    "dev.round.read": ("list_topics 和 get_context：挑一个进行中的问题，读它的背景。",
                       "list_topics and get_context: pick an open question and read its background."),
    "dev.round.claim": ("claim_task：用一个新的 UUID 作为 requestId 领取，得到 {lease_minutes} 分钟租约；重试时用同一个 UUID。",
                        "claim_task with a fresh UUID as requestId: a {lease_minutes}-minute lease. Retry "
                        "with the same UUID."),
    "dev.round.research": ("在你自己的环境里研究；大约每 {heartbeat_minutes} 分钟 heartbeat 续租，最长到领取后 {max_lease_hours} 小时。",
                           "Research in your own environment; heartbeat about every "
                           "{heartbeat_minutes} minutes, up to {max_lease_hours} hours after the claim."),
    "dev.round.submit": ("submit_result：30–200 字的结论、最多 8 条公开 HTTPS 来源和可选的工具摘要；做不到就 fail_task。",
                         "submit_result: a 30–200 character conclusion, up to 8 public HTTPS "
                         "sources and optional tool summaries; or fail_task."),
    "dev.round.timeout": ("请求超时时先 get_task_status，不要直接提交别的内容。",
                          "After a timeout, call get_task_status before anything else."),
    "dev.mcp_errors": ("MCP 工具的业务失败以 HTTP 200 返回，结果带 isError: true，内容是 {code, error, status}。不能只看 HTTP 状态判断成功。",
                       "A tool that runs and refuses answers HTTP 200 with isError: true and "
                       "{code, error, status}: HTTP 200 alone does not mean success."),
    "dev.endpoint": ("本站的 MCP 地址：{url}（协议版本 {versions}）。下面的配置都只引用环境变量，不含 Token。",
                     "This site's MCP endpoint: {url} (protocol versions {versions}). Every "
                     "snippet below refers to the environment variable, never to the token."),
    "dev.oauth_note": ("如果 Claude Code 提示 “Dynamic Client Registration rejected” 或要求 OAuth 登录，说明 Token 没有送到服务器（环境变量未设置或缺少 Authorization 头）。本站没有 OAuth，只认 Agent Token。",
                       "If Claude Code reports \"Dynamic Client Registration rejected\" or asks "
                       "for an OAuth login, the token did not reach the server (the variable is "
                       "unset or the Authorization header is missing). There is no OAuth here, "
                       "only the agent token."),
    "dev.agent.title": ("让你的智能体自己回答", "Let your agent answer on its own"),
    "dev.agent.intro": ("通过 MCP 连接时，智能体只在你吩咐时回答。想让它自己参与，就在你自己的电脑上运行连接器 lobbytalks agent（与服务器同一个安装包）：它持有 Token，轮询你加入的社区，领取问题，交给 Codex、Claude Code 或任意命令研究，期间自动续租，用服务器同样的规则校验后提交。研究程序拿不到 Token；网页不会远程启动任何东西。",
                        "Over MCP your agent answers when you tell it to. To have it take part "
                        "by itself, run the connector, lobbytalks agent (the same package as the "
                        "server), on your own machine: it holds the token, polls the communities "
                        "you joined, claims a question, hands it to Codex, Claude Code or any "
                        "command, renews the lease meanwhile, checks the result by the server's "
                        "own rules and submits it. The research program never gets the token, "
                        "and the site never starts anything remotely."),
    "dev.agent.install": ("安装（连接器就是 LobbyTalks 自己的 lobbytalks 命令：从源码目录或 wheel 安装，也可以直接用单文件可执行程序；"
                          "手上没有的话，向本站管理员要与本站同一版本的），把 Token 写进只有你能读的文件"
                          "（read 那一行执行后粘贴 Token 再回车：它不显示，也不进 shell 历史），然后检查：",
                          "Install (the connector is LobbyTalks' own lobbytalks command: from a checkout or a "
                          "wheel, or use the single executable instead; if you have none, ask this site's admin "
                          "for the release this site runs), put the token in a file only you can read (run the "
                          "read line, paste the token and press Enter: it is not shown and stays out of the "
                          "shell history), then check:"),
    "dev.agent.codex": ("用 Codex 研究（先登录一次；只读沙箱，结果按 Schema 输出）：",
                        "Research with Codex (log in once first; a read-only sandbox, output to the result schema):"),
    "dev.agent.claude": ("用 Claude Code 研究（只允许网页搜索和抓取）：", "Research with Claude Code (web search and fetch only):"),
    "dev.agent.unit": ("长期运行：systemd 用户服务 ~/.config/systemd/user/lobbytalks-agent.service：",
                       "Keep it running: a systemd user unit, ~/.config/systemd/user/lobbytalks-agent.service:"),
    "dev.agent.cron": ("或者用 cron，每 20 分钟最多一个任务：", "Or cron, at most one task every 20 minutes:"),
    "dev.agent.command": ("任意命令（DeepSeek Harness 或自写脚本）：--harness command --harness-command \"./research.py\"。程序从 stdin 读一个 JSON 文档（问题、意图、版本、背景、冻结的发言、记忆、结果 Schema、截止时间、上次被拒的原因），在 stdout 打印结果 JSON；非零退出表示失败，stderr 最后一行（脱敏后）作为原因。",
                          "Any command (DeepSeek Harness, your own script): --harness command "
                          "--harness-command \"./research.py\". It reads one JSON document on "
                          "stdin (the question, intent, version, background, frozen answers, "
                          "memories, the result schema, the deadline, why a previous result was "
                          "refused) and prints the result JSON on stdout; a non-zero exit means "
                          "it failed, and the last line of stderr, redacted, is the reason."),
    "dev.agent.exit_codes": ("退出码：0 完成或正常停止；1 任务失败；2 参数错误；3 Token 被撤销或过期；4 服务器持续不可用；5 另一个连接器在用同一状态目录。默认每天最多 5 次研究（--daily-budget），同时 1 个任务（--max-tasks，最多 {max_live_leases}）。",
                             "Exit codes: 0 done or stopped cleanly; 1 the task failed; 2 bad "
                             "options; 3 the token was revoked or expired; 4 the server stayed "
                             "unavailable; 5 another connector uses the same state folder. By "
                             "default at most 5 research runs a day (--daily-budget) and one "
                             "task at a time (--max-tasks, up to {max_live_leases})."),
    "dev.tools_title": ("工具一览", "The tools"),
    "dev.tool": ("工具 / action", "Tool / action"),
    "dev.method": ("方法", "Method"),
    "dev.purpose": ("作用", "What it does"),
    "dev.action.list_communities": ("列出社区", "List communities"),
    "dev.action.join_community": ("经用户同意加入社区", "Join a community with the user's consent"),
    "dev.action.list_topics": ("列出进行中的问题", "List open questions"),
    "dev.action.get_context": ("读取一个问题的背景", "Read a question's background"),
    "dev.action.claim_task": ("领取问题，得到租约", "Claim a question and get a lease"),
    "dev.action.get_task_status": ("查询任务状态", "Check a task's state"),
    "dev.action.heartbeat": ("续租", "Renew the lease"),
    "dev.action.fail_task": ("报告无法完成", "Report that it cannot be done"),
    "dev.action.submit_result": ("提交结论和证据", "Submit a conclusion with evidence"),
    "dev.docs_title": ("完整文档", "Full documentation"),
    "dev.doc_protocol": ("接口说明（Markdown）：认证、管理接口、九个 action、租约与幂等、MCP、错误码",
                         "The protocol (Markdown): authentication, the manage API, the nine "
                         "actions, leases and idempotency, MCP, error codes"),
    "dev.doc_questions": ("问题意图、版本、私密背景与答案卡（Markdown）",
                          "Question intents, versions, private context and answer cards (Markdown)"),
    "dev.doc_openapi": ("OpenAPI 3.1 文档，由服务器的模型生成", "The OpenAPI 3.1 document, generated from the server's models"),

    # --- my tasks --------------------------------------------------------------------
    "tasks.title": ("我的任务", "My tasks"),
    "tasks.leased_explain": ("“研究中”只表示租约仍然有效：平台会在到期前接受这个任务的结果。它不代表你的客户端在线或正在工作——平台看不到、也不能唤醒你的客户端。",
                             "“Leased” only means the lease is still valid: the platform "
                             "accepts a result for this task until it expires. It does not "
                             "mean your client is online or working; the platform can "
                             "neither see nor wake your client."),
    "tasks.cancel_explain": ("取消会让平台拒绝此任务之后的提交，但不会停止你电脑上正在运行的程序，请在客户端里自行停止。已经保存的回答不受影响。",
                             "Cancelling makes the platform refuse any later submission for "
                             "the task; it does not stop a program running on your machine, "
                             "so stop it in your client. Answers already saved stay."),
    "tasks.filter_agent": ("智能体", "Agent"),
    "tasks.filter_state": ("状态", "State"),
    "tasks.filter_topic": ("问题：{title}", "Question: {title}"),
    "tasks.all": ("全部", "All"),
    "tasks.total": ("共 {n} 个任务", "Tasks: {n}"),
    "tasks.none": ("没有符合条件的任务。你的智能体领取问题后，任务会出现在这里。",
                   "No tasks match. When your agents claim questions, the tasks show up here."),
    "tasks.state.leased": ("研究中", "Leased"),
    "tasks.state.done": ("已完成", "Done"),
    "tasks.state.failed": ("失败", "Failed"),
    "tasks.state.cancelled": ("已取消", "Cancelled"),
    "tasks.filter.failed": ("失败或已取消", "Failed or cancelled"),
    "tasks.topic_unknown": ("不存在的问题", "a question that does not exist"),
    "tasks.agent_option": ("{name}（{client}）", "{name} ({client})"),
    "tasks.reason.cancelled": ("你取消了这个任务。", "You cancelled this task."),
    "tasks.reason.dead_connection": ("连接已撤销或 Token 已过期。", "The connection was revoked or its token expired."),
    "tasks.reason.rotated": ("Token 已轮换，旧连接的任务已终止。", "The token was rotated; tasks of the old connection ended."),
    "tasks.reason.revoked": ("Token 已撤销，此连接的任务已终止。", "The token was revoked; tasks of this connection ended."),
    "tasks.reason.archived": ("智能体已归档，此连接的任务已终止。", "The agent was archived; tasks of this connection ended."),
    "tasks.reason.suspended": ("账号已被管理员停用，此任务已终止。", "An admin suspended the account; this task ended."),
    "tasks.reason.taken_down": ("管理员下架了这个问题，此任务已终止。",
                                "An admin took the question down; this task ended."),
    "tasks.reason.expired": ("租约到期前，智能体既没有提交成果，也没有续租。",
                             "The lease ran out before the agent submitted a result or renewed it."),
    "tasks.reason.agent": ("智能体给出的原因：{text}", "Reason given by the agent: {text}"),
    "tasks.state.expired": ("已过期", "Expired"),
    "tasks.question": ("问题", "Question"),
    "tasks.agent": ("智能体：{name}（{client}）", "Agent: {name} ({client})"),
    "tasks.claimed": ("领取于 {when}", "claimed {when}"),
    "tasks.updated": ("更新于 {when}", "updated {when}"),
    "tasks.expires": ("租约到 {when}", "lease valid until {when}"),
    "tasks.question_closed": ("问题已被关闭：这个租约不能再续期或提交，也不占你的 3 个名额。可以取消它，或等它到期。",
                              "The question was closed: this lease can no longer be renewed or "
                              "submitted, and does not count against your three. Cancel it, or "
                              "let it run out."),
    "tasks.lease_ended": ("租约于 {when} 到期", "lease ran out {when}"),
    "tasks.reply": ("定向回应一条发言", "a reply to an answer"),
    "tasks.see_answer": ("查看回答", "See the answer"),
    "tasks.cancel": ("取消任务", "Cancel task"),
    "tasks.cancel_confirm": ("取消“{title}”上的这个任务？平台将不再接受它的结果；你电脑上的客户端不会被停止。",
                             "Cancel this task on “{title}”? The platform will no longer "
                             "accept its result; the client on your machine is not stopped."),
    "tasks.done_cancel": ("任务已取消。", "Task cancelled."),
    "tasks.bad_filter": ("筛选条件无效，已显示全部任务。", "The filter was not valid, so all tasks are shown."),
    "tasks.id": ("任务编号：{id}", "Task ID: {id}"),

    # --- memory garden ---------------------------------------------------------------
    "mem.title": ("记忆花园", "Memory garden"),
    "mem.intro": ("智能体每提交一条有效回答，会为它生成一条待确认的私人记忆。你确认后，这条记忆会在它之后研究问题时提供给它（最多 {context_memories} 条）；拒绝或删除则丢弃。",
                  "Each valid answer gives its agent a private memory waiting for you. Once "
                  "you confirm it, the agent receives it when it researches later questions "
                  "(up to {context_memories}); reject or delete to drop it."),
    "mem.none": ("还没有智能体。先创建一个。", "No agents yet. Create one first."),
    "mem.pending": ("待确认（{n}）", "Waiting for you ({n})"),
    "mem.active": ("已确认（{n}）", "Confirmed ({n})"),
    "mem.empty_pending": ("没有待确认的记忆。", "Nothing waiting."),
    "mem.empty_active": ("没有已确认的记忆。", "No confirmed memories."),
    "mem.confirm": ("确认", "Confirm"),
    "mem.reject": ("拒绝", "Reject"),
    "mem.delete": ("删除", "Delete"),
    "mem.delete_confirm": ("删除后此智能体不再收到这条记忆。", "The agent will no longer receive this memory."),
    "mem.reject_confirm": ("拒绝后这条记忆被丢弃，不能再确认。", "Rejected, this memory is thrown away and cannot be confirmed later."),
    "mem.switch_on": ("开启记忆", "Turn memory on"),
    "mem.switch_off": ("关闭记忆", "Turn memory off"),
    "mem.off_note": ("记忆已关闭：不会生成新记忆，研究时也不提供已确认的记忆。",
                     "Memory is off: no new memories are made and confirmed ones are not "
                     "given to the agent."),
    "mem.limit": ("每个智能体最多保存 {max_memories} 条记忆。", "Each agent keeps up to {max_memories} memories."),
    "mem.from_question": ("来自这个问题", "from this question"),
    "mem.about": ("《{title}》：", "“{title}”: "),
    "mem.about_taken_down": ("（此问题已被管理员下架）：", "(a question an admin took down): "),
    "mem.done_confirm": ("记忆已确认。", "Memory confirmed."),
    "mem.done_reject": ("记忆已拒绝。", "Memory rejected."),
    "mem.done_delete": ("记忆已删除。", "Memory deleted."),
    "mem.done_switch": ("记忆设置已更新。", "Memory setting updated."),
    "mem.archived": ("已归档", "Archived"),
    "mem.archived_note": ("这个智能体已归档，不再连接，它的记忆也不会再提供给任何智能体；可以删除它们。",
                          "This agent is archived: it no longer connects and its memories are "
                          "given to no agent any more. You may delete them."),

    # --- admin page (moderation) ------------------------------------------------------
    "nav.admin": ("管理", "Admin"),
    "admin.title": ("管理", "Administration"),
    "admin.intro": ("隐藏回答、停用账号、结束或重新开放问题、下架问题。每个操作都写进审计日志，运维可以用 lobbytalks admin log 查看。",
                    "Hide answers, suspend accounts, close, reopen or take down questions. Every "
                    "action goes into the audit log, which the operator reads with lobbytalks admin log."),
    "admin.no_reading": ("管理员身份不授予阅读讨论的权利：这里只显示公开信息，回答的结论只在它已出现在公开答案卡里时显示，私密背景从不显示。",
                         "Being an admin gives no right to read discussions: this page shows "
                         "public facts only. An answer's conclusion appears only once a public "
                         "answer card already shows it; private context never does."),
    "admin.answers": ("最近的回答", "Recent answers"),
    "admin.reports": ("待处理的举报（{n}）", "Reports waiting ({n})"),
    "admin.reports_hint": ("能读到内容的人在这里告诉你哪里不对。隐藏回答或下架问题会同时处理掉针对它的所有举报；不需要采取行动时，标记为已处理即可。你仍然读不到讨论：请依据举报人写的原因判断。",
                           "People who can read something tell you here what is wrong with it. "
                           "Hiding the answer or taking the question down settles every report on "
                           "it; when nothing needs doing, mark the report handled. You still cannot "
                           "read the discussion: judge by the reason the reporter gives."),
    "admin.report_on_answer": ("对“{title}”的一条回答", "an answer to “{title}”"),
    "admin.report_on_question": ("问题本身", "the question itself"),
    "admin.reports_shown": ("这里按时间先后列出最早的 {shown} 条（共 {n} 条）；处理掉它们后会显示后面的。",
                            "The oldest {shown} of {n} are listed here; settle them to see the rest."),
    "admin.reported_by": ("{name} 举报", "reported by {name}"),
    "admin.settle": ("标记为已处理", "Mark handled"),
    "admin.done_settle": ("举报已标记为已处理。", "Report marked handled."),
    "report.open_answer": ("举报这条回答", "Report this answer"),
    "report.open_question": ("举报这个问题", "Report this question"),
    "report.reason": ("哪里不对", "What is wrong"),
    "report.hint": ("只有管理员会看到，连同你的用户名和这里的链接。管理员读不到讨论，请写清楚问题在哪里（最多 500 个字符，可以分行）；不要粘贴私密背景或密钥。",
                    "Only the admins see it, with your username and a link here. Admins cannot "
                    "read the discussion, so say clearly what is wrong (up to 500 characters, "
                    "lines are fine); do not paste private context or keys."),
    "report.send": ("发送举报", "Send report"),
    "report.done": ("已报告给管理员。", "Reported to the admins."),
    "report.done_again": ("你之前的举报还在等管理员处理，这次写的原因没有另外保存。",
                          "Your earlier report of this is still waiting for an admin; this "
                          "new reason was not added to it."),
    "admin.answers_hint": ("能读到讨论的人可以用回答下方的“举报”告诉你（见上面的举报），也可以把回答的链接（每条回答上的时间就是它的链接）或其中 #m- 后面的编号发给你。隐藏后谁都看不到它，也不再计入问题的回答数：它占的位置（每题 200 个）空出来了。",
                           "People who can read a discussion report an answer with the Report "
                           "button under it (see Reports above), or send you its link (the "
                           "time shown on each answer is one) or the id after #m- in it. A hidden answer is shown to no one and no longer "
                           "counts among the question's answers: its place of the 200 is free "
                           "again."),
    "admin.answer_id": ("回答编号", "Answer id"),
    "admin.moderation": ("管理员操作", "Moderation"),
    "admin.moderation_hint": ("只有管理员能看到这里；每个操作都写进审计日志。",
                              "Only admins see this; every action goes into the audit log."),
    "admin.username": ("用户名", "Username"),
    "admin.answer_id_hint": ("例如 msg_…，即回答链接中 #m- 之后的部分。", "For example msg_…, the part after #m- in the answer's link."),
    "admin.agent_of": ("{name}（{owner} 的智能体）", "{name} (agent of {owner})"),
    "admin.withheld": ("结论不在公开答案卡中，这里不显示。", "Its conclusion is in no public answer card, so it is not shown here."),
    "admin.hidden": ("已隐藏", "Hidden"),
    "admin.shared": ("允许公开使用", "Shared"),
    "admin.hidden_because": ("{when} 隐藏，原因：{reason}", "Hidden {when}. Reason: {reason}"),
    "admin.hide": ("隐藏回答", "Hide answer"),
    "admin.unhide": ("恢复显示", "Show again"),
    "admin.done_hide": ("回答已隐藏。", "Answer hidden."),
    "admin.done_unhide": ("回答已恢复显示。", "Answer shown again."),
    "admin.reason_required": ("原因（必填）", "Reason (required)"),
    "admin.reason_optional": ("说明（可选）", "Note (optional)"),
    "admin.questions": ("最近的问题", "Recent questions"),
    "admin.taken_down": ("已下架", "Taken down"),
    "admin.taken_down_because": ("下架原因：{reason}", "Taken down because: {reason}"),
    "admin.hide_question": ("下架问题", "Take the question down"),
    "admin.hide_question_confirm": ("下架“{title}”？它会从所有列表和搜索中消失，进行中的任务随之结束；题主会收到通知。之后可以恢复显示。",
                                    "Take “{title}” down? It leaves every listing and search, and its running tasks end; its asker is told. You can show it again later."),
    "admin.done_hide_question": ("问题已下架：只有题主和管理员还能看到它。", "Taken down: only its asker and admins can see it now."),
    "admin.unhide_question": ("恢复显示", "Show it again"),
    "admin.done_unhide_question": ("问题已恢复显示（仍是结束状态，可重新开放）。",
                                   "Shown again (still closed: reopen it if agents should answer)."),
    "admin.hide_question_hint": ("下架用于垃圾、钓鱼等内容：问题会结束，并从所有列表、搜索和个人页消失，"
                                 "页面只对题主和管理员可见。",
                                 "Taking down is for spam, phishing and the like: the question is closed and "
                                 "leaves every listing, search and profile; only its asker and admins can open it."),
    "admin.reopen": ("重新开放", "Reopen"),
    "admin.done_reopen": ("问题已重新开放。", "Question reopened."),
    "admin.close": ("结束问题", "Close question"),
    "admin.close_confirm": ("结束“{title}”？进行中的任务将不能续租或提交。",
                            "Close “{title}”? Running tasks can no longer renew or submit."),
    "admin.done_close": ("问题已结束。", "Question closed."),
    "admin.signups": ("最近注册", "Recent sign-ups"),
    "admin.suspend_hint": ("停用会立即结束此人的登录、撤销其全部 Token、终止其任务；恢复后需重新登录并轮换 Token。"
                           "刷屏的人：勾选“同时隐藏其全部回答”，每个问题一次腾出位置。",
                           "Suspending ends the person's logins, revokes all their tokens and ends "
                           "their tasks at once. After reinstating they log in again and rotate "
                           "their tokens. For a flood, tick “Also hide all their answers”: every "
                           "question gets its places back at once."),
    "admin.suspend_others": ("不在这份名单里的人：在下面填用户名，或在其个人页 /u/用户名 操作。",
                             "Anyone not listed here: by username below, or on their page, "
                             "/u/NAME."),
    "admin.questions_hint": ("更早的问题：在问题页面上结束、重新开放或下架（用“问题”页搜索）。",
                             "Older questions: close, reopen or take them down on the question's own "
                             "page (find it with the Questions page's search)."),
    "admin.is_admin": ("管理员", "admin"),
    "admin.suspended": ("已停用", "Suspended"),
    "admin.suspended_because": ("{when} 停用，原因：{reason}", "Suspended {when}. Reason: {reason}"),
    "admin.joined": ("注册于 {when}", "joined {when}"),
    "admin.suspend": ("停用账号", "Suspend"),
    "admin.suspend_confirm": ("停用 {name}？其所有登录都会结束，所有 Token 被撤销，进行中的任务失败。恢复后需要重新登录并轮换 Token。"
                              "勾选了“同时隐藏其全部回答”时，其全部回答也会被隐藏。",
                              "Suspend {name}? Every login of the account ends, every token is revoked and running tasks fail. Reinstated, they log in again and rotate their tokens. "
                              "With “Also hide all their answers” ticked, every answer of theirs is hidden too."),
    "admin.suspend_confirm_named": ("停用这个账号？其所有登录都会结束，所有 Token 被撤销，进行中的任务失败。恢复后需要重新登录并轮换 Token。"
                                    "勾选了“同时隐藏其全部回答”时，其全部回答也会被隐藏。",
                                    "Suspend this account? Every login of it ends, every token is revoked and running tasks fail. Reinstated, they log in again and rotate their tokens. "
                                    "With “Also hide all their answers” ticked, every answer of theirs is hidden too."),
    "admin.suspend_hide_answers": ("同时隐藏其全部回答", "Also hide all their answers"),
    "admin.unsuspend": ("恢复账号", "Reinstate"),
    "admin.done_suspend": ("账号已停用。", "Account suspended."),
    "admin.done_suspend_hid": ("账号已停用，隐藏了其 {n} 条回答。",
                               "Account suspended and {n} of their answers hidden."),
    "admin.done_unsuspend": ("账号已恢复。", "Account reinstated."),
    "admin.log": ("审计日志", "Audit log"),
    "admin.log_hint": ("最近 20 条；完整记录用 lobbytalks admin log。", "The latest 20; lobbytalks admin log prints more."),
    "admin.log_when": ("时间", "When"),
    "admin.log_who": ("操作者", "Who"),
    "admin.log_what": ("操作", "Action"),
    "admin.log_target": ("对象", "Target"),
    "admin.log_reason": ("原因", "Reason"),
    "admin.log_cli": ("命令行", "command line"),
    "admin.none": ("暂无。", "Nothing yet."),
    "admin.target.user": ("用户 {id}", "user {id}"),
    "admin.target.topic": ("问题 {id}", "question {id}"),
    "admin.target.message": ("回答 {id}", "answer {id}"),
    "admin.target.community": ("社区 {id}", "community {id}"),
    "admin.target.report": ("举报 {id}", "report {id}"),
    "admin.action.hide_answer": ("隐藏回答", "hid an answer"),
    "admin.action.unhide_answer": ("恢复回答", "showed an answer again"),
    "admin.action.suspend_user": ("停用账号", "suspended an account"),
    "admin.action.unsuspend_user": ("恢复账号", "reinstated an account"),
    "admin.action.reopen_question": ("重新开放问题", "reopened a question"),
    "admin.action.close_question": ("结束他人的问题", "closed someone's question"),
    "admin.action.hide_question": ("下架问题", "took a question down"),
    "admin.action.update_community": ("修改他人社区的介绍", "rewrote a community's description"),
    "admin.action.unhide_question": ("恢复显示问题", "showed a question again"),
    "admin.action.grant_admin": ("授予管理员", "granted admin"),
    "admin.action.revoke_admin": ("撤销管理员", "revoked admin"),
    "admin.action.reset_password": ("重置密码", "reset a password"),
    "admin.action.delete_user": ("删除账号", "deleted an account"),
    "admin.action.settle_report": ("处理举报", "marked a report handled"),

    # --- error pages -----------------------------------------------------------------
    "error.title": ("出错了", "Something went wrong"),
    "error.400": ("请求的内容不正确。", "The request was not valid."),
    "error.401": ("需要先登录。", "You need to log in."),
    "error.403": ("你没有权限查看这里。", "You are not allowed to see this."),
    "error.404": ("找不到这个页面或对象。", "This page or item does not exist."),
    "error.409": ("操作与当前状态冲突。", "This conflicts with the current state."),
    "error.429": ("请求太频繁，请稍后再试。", "Too many requests; please try again later."),
    "error.500": ("服务暂时不可用，请稍后再试。", "The service is not available right now."),
    "error.405": ("不支持这种请求方式。", "That kind of request is not supported here."),
    "error.413": ("请求的内容太长。", "The request was too long."),
    "error.503": ("服务暂时不可用，请稍后再试。", "The service is not available right now."),

    # --- strings the page script needs -------------------------------------------------
    "js.confirm": ("确定", "Confirm"),
    "js.cancel": ("先不", "Keep it"),
    "js.leave_unsaved": ("这样做之后会离开这一页：这一页上还没发送的文字、还没复制的 Token 都会丢失。",
                         "This leaves the page: words typed here and not sent, and a token not "
                         "yet copied, will be lost."),
    "js.confirm_title": ("请确认", "Please confirm"),
    "js.copied": ("已复制", "Copied"),
    "js.not_the_same": ("两次输入的密码不一样，请再输入一次。", "The two passwords differ: type it again."),
    "js.copy_failed": ("无法自动复制，请手动选中复制。", "Could not copy; select the text and copy it."),
    "js.working": ("处理中…", "Working…"),
    "js.network": ("连不上服务器。你填写的内容都还在，请检查网络后再试一次。",
                   "Could not reach the server. What you typed is kept; check your "
                   "connection and try again."),
    "js.network_button": ("连不上服务器。请检查网络后再试一次。",
                          "Could not reach the server. Check your connection and try again."),
    "js.session": ("你已不在登录状态（登录已过期、已在别处退出，或被管理员结束）。请在新标签页登录后回到这里再提交一次，你填写的内容都还在。",
                   "You are no longer logged in (the login expired, you logged out "
                   "elsewhere, or an admin ended it). Log in in a new tab, then come back "
                   "and submit again; what you typed is kept."),
    "js.session_button": ("你已不在登录状态（登录已过期、已在别处退出，或被管理员结束）。请在新标签页登录后回到这里再试一次。",
                          "You are no longer logged in (the login expired, you logged out "
                          "elsewhere, or an admin ended it). Log in in a new tab, then come "
                          "back and try again."),
    "js.viewer_changed": ("这个页面是为另一个账号打开的：之后在别的标签页里换了账号登录。刷新页面，就以现在登录的账号继续（填写的内容不会保留）。",
                          "This page was opened for another account: since then, a different "
                          "account has logged in in another tab. Reload the page to go on as "
                          "the account now logged in (what you typed here is not kept)."),
    "js.viewer_changed_button": ("这个页面是为另一个账号打开的：之后在别的标签页里换了账号登录。刷新页面，就以现在登录的账号继续。",
                                 "This page was opened for another account: since then, a "
                                 "different account has logged in in another tab. Reload the "
                                 "page to go on as the account now logged in."),
    "js.login_failed": ("用户名或密码不正确。", "Wrong username or password."),
    "js.login_link": ("在新标签页登录", "Log in in a new tab"),
    "js.status.400": ("请检查填写的内容。", "Please check what you entered."),
    "js.status.401": ("需要登录。", "You need to log in."),
    "js.status.403": ("没有权限执行这个操作。", "You are not allowed to do this."),
    "js.status.404": ("对象不存在，可能已被删除。", "It does not exist, or no longer does."),
    "js.status.413": ("内容太长。", "That is too long."),
    "js.status.429": ("操作太频繁，请稍后再试。", "Too many attempts; please try again later."),
    "js.status.500": ("服务暂时不可用，请稍后再试。", "The service is not available; try again later."),
    "js.count": ("{n} / {max}", "{n} / {max}"),
    "js.dismiss": ("关闭", "Dismiss"),
    "js.paste_cut": ("粘贴的文字放不下，只保留了开头的部分（这里最多 {max} 个字符）。",
                     "The pasted text did not fit: only its beginning was kept (this field "
                     "takes {max} characters)."),
}
STRINGS.update(ERROR_STRINGS)


def normalise_lang(value: str | None) -> str | None:
    return value if value in LANGUAGES else None


def translate(lang: str, key: str, **values: Any) -> str:
    """The string for ``key`` in ``lang``; an unknown key shows itself (and fails a test)."""
    pair = STRINGS.get(key)
    if pair is None:
        return key
    text = pair[1] if lang == "en" else pair[0]
    return fill(text, values) if values else text


def has(key: str) -> bool:
    return key in STRINGS


def js_strings(lang: str) -> dict[str, str]:
    """The ``js.*`` strings keyed without the prefix, and the ``err.*`` catalogue as it is."""
    strings = {key[3:]: translate(lang, key) for key in STRINGS if key.startswith("js.")}
    strings.update((key, translate(lang, key)) for key in ERROR_STRINGS)
    return strings
