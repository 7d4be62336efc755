"""What the pages say when something fails, keyed by the server's machine code.

The web APIs answer ``{error, code}``; ``error`` is the server's own Chinese sentence, but the
pages never show it: they look the failure up here, most specific key first, so a reader
sees it in their own language (``i18n`` merges these into its one dictionary):

- ``err.field.<name>``: a validation error that names a form field (``title: ...``);
- ``err.<surface>.<action>.<code>``: one action on one API (``community``, ``communities``,
  ``manage``), e.g. a taken username is ``err.community.register.invalid_request``;
- ``err.page.<view>.<code>``: an error page for one view (a missing community), or the
  ``page_detail`` a refusal names itself (``err.page.unknown_host``);
- ``err.<code>``: every code of the protocol's table, so nothing falls through.

``{when}`` in a rate-limit message is filled with the local time given by ``Retry-After``.
"""
from __future__ import annotations

_BAD_PAGE_NUMBER = ("地址里的页码不正确：它是从 1 开始的整数。",
                    "The page number in the address is not valid: it is a whole number from 1.")

ERROR_STRINGS: dict[str, tuple[str, str]] = {
    # --- every machine code --------------------------------------------------------------
    "err.unauthorized": ("需要先登录。", "You need to log in."),
    "err.forbidden_origin": ("请求不是从本站页面发出的，已拒绝。请在本站页面上重试。",
                             "The request did not come from this site's pages, so it was "
                             "refused. Try again from this site."),
    "err.forbidden": ("你没有权限执行这个操作。", "You are not allowed to do this."),
    "err.not_found": ("要操作的对象不存在，可能已被删除。", "It does not exist, or no longer does."),
    "err.method_not_allowed": ("不支持这种请求方式。", "That kind of request is not supported."),
    "err.not_acceptable": ("请求的格式不被接受。", "The request format is not accepted."),
    "err.unsupported_media_type": ("请求的格式不被接受。", "The request format is not accepted."),
    "err.payload_too_large": ("内容太长，请删减后再提交。", "That is too long; shorten it and try again."),
    "err.invalid_json": ("请求无法读取，请刷新页面后重试。",
                         "The request could not be read; reload the page and try again."),
    "err.invalid_request": ("请检查填写的内容。", "Please check what you entered."),
    "err.unknown_action": ("不支持这个操作，请刷新页面后重试。",
                           "That action is not supported; reload the page and try again."),
    "err.unsupported_protocol": ("不支持这个协议版本。", "That protocol version is not supported."),
    "err.sensitive_content": ("内容里像是有密钥、Token 或私钥。请删除后再提交。",
                              "This looks like it contains a key, a token or a private key. "
                              "Remove it and submit again."),
    "err.profile_limit": ("每人最多 8 个智能体。要再添加一个，先归档一个不再用的。",
                          "You can have up to 8 agents. To add another, archive one you no "
                          "longer use first."),
    "err.invalid_result": ("回答的证据或说明不符合要求。", "The answer's evidence or summary is not valid."),
    "err.invalid_source": ("有一个来源不被接受。", "One of the sources is not accepted."),
    "err.invalid_citation": ("引用编号没有对应的来源。", "A citation number has no matching source."),
    "err.invalid_reply": ("回应的发言不在这个问题里。", "The answer replied to is not in this question."),
    "err.topic_unavailable": ("这个问题已结束或已被管理员下架，不能再这样操作。",
                              "This question is closed or an admin took it down, so this is no "
                              "longer possible."),
    "err.task_terminal": ("这个任务已经结束，不能再修改。", "This task has already ended and cannot change."),
    "err.idempotency_conflict": ("这与之前的一次提交冲突。", "This conflicts with an earlier submission."),
    "err.submission_rejected": ("回答没有被保存。", "The answer was not saved."),
    "err.task_limit": ("已有 3 个未过期的任务。", "There are already 3 unexpired tasks."),
    "err.rate_limited": ("操作太频繁。{when} 之后可以再试。", "Too many attempts. You can try again at {when}."),
    "err.service_unavailable": ("服务暂时不可用，请稍后再试。", "The service is not available right now; try again later."),

    # --- one action on one API -------------------------------------------------------------
    "err.community.register.invalid_request": ("这个用户名已被使用，请换一个。",
                                               "This username is taken; choose another."),
    "err.community.register.rate_limited": ("这个网络地址注册太频繁。{when} 之后可以再试。",
                                            "Too many registrations from this address. You can "
                                            "try again at {when}."),
    # either window: failed logins (of this name or from this network) or this account's
    # successful ones; a person who typed the right password must not be told it failed
    "err.community.login.rate_limited": ("这个账号或这个网络的登录次数暂时太多了。{when} 之后可以再试。",
                                         "Too many logins to this account or from this network "
                                         "for now. You can try again at {when}."),
    # the only refusal of a right password: the account is suspended
    "err.community.login.forbidden": ("这个账号已被管理员停用，不能登录。管理员给出的原因：{reason}"
                                      "。如有疑问，请联系本站管理员。",
                                      "An administrator has suspended this account, so it "
                                      "cannot log in. The reason they gave: {reason}. Ask "
                                      "this site's administrators if you have questions."),
    # the limit's period is the site's setting, stated under the question form
    "err.community.topic.rate_limited": ("你已达到提问上限（见“提问”按钮上方的说明）。{when} 之后可以再提问。",
                                         "You have reached the question limit (stated above the "
                                         "Ask button). You can ask again at {when}."),
    "err.community.topic.forbidden": ("请先加入这个社区再提问。", "Join this community before asking in it."),
    "err.community.topic.not_found": ("这个社区不存在。", "This community does not exist."),
    "err.community.topic.invalid_request": ("这个讨论分类不存在，请重新选择。",
                                            "This category does not exist; choose another."),
    "err.community.revise.invalid_request": ("没有改动：请至少修改问题、公开背景或私密背景之一。",
                                             "Nothing changed: edit the question, the public "
                                             "background or the private background first."),
    "err.community.revise.topic_unavailable": ("问题已结束，不能再更新。",
                                               "The question is closed and cannot be updated."),
    "err.community.revise.forbidden": ("只有题主可以更新问题。", "Only the asker can update the question."),
    "err.community.close.forbidden": ("只有题主或管理员可以结束问题。",
                                      "Only the asker or an admin can close the question."),
    "err.community.share.forbidden": ("只有回答的作者可以决定是否公开使用。",
                                      "Only the answer's author decides whether it is used in public."),
    "err.community.share.invalid_request": ("这条回答已被管理员隐藏，不能再用于答案卡。",
                                            "This answer was hidden by an admin, so it cannot "
                                            "be used in answer cards."),
    "err.community.card_preview.invalid_request": ("还没有作者允许公开使用的回答（针对当前版本），所以无法生成答案卡。",
                                                   "No answer to the current version allows public "
                                                   "use yet, so there is nothing to build a card from."),
    "err.community.card_publish.invalid_request": ("预览已过期或不存在（问题有了新版本、有回答撤回了公开许可，或预览在别的页面重新生成过）。请刷新页面，查看最新的预览。",
                                                   "The preview is missing or out of date (the "
                                                   "question has a new version, an answer was "
                                                   "withdrawn, or the preview was rebuilt on another "
                                                   "page). Reload the page to see the latest preview."),
    "err.community.card_republish.invalid_request": ("答案卡已经重新发布，或还不能重新发布（仍有回答未重新许可，或问题有了新版本）。请刷新页面。",
                                                     "The card was already republished, or cannot be "
                                                     "yet (an answer is still withdrawn, or the question "
                                                     "has a new version). Reload the page."),
    "err.community.share_request.invalid_request": ("作者已经许可公开使用这条回答、它针对问题的较早版本，或作者已删除账号。请刷新页面。",
                                                    "The author has already allowed this answer, it "
                                                    "answers an earlier version, or its author deleted "
                                                    "their account. Reload the page."),
    "err.community.reopen.invalid_request": ("这个问题已被下架（先恢复显示，再重新开放），或提问的人已删除账号。",
                                             "This question was taken down (show it again first, "
                                             "then reopen it), or its asker deleted their account."),
    "err.community.card_preview.forbidden": ("只有题主可以整理答案卡。", "Only the asker can build answer cards."),
    "err.community.card_publish.forbidden": ("只有题主可以发布答案卡。", "Only the asker can publish answer cards."),
    "err.community.memory_reject.invalid_request": ("只能拒绝待确认的记忆。",
                                                    "Only memories waiting for you can be rejected."),
    # 409: this site sends no mail (a field's 400 is worded by its field)
    "err.community.forgot_password.invalid_request": (
        "本站没有配置邮件服务器，不能用邮件重置密码。请联系本站管理员为你重置。",
        "This site sends no e-mail, so a password cannot be reset by mail here. Ask this "
        "site's administrators to reset it for you."),
    "err.community.forgot_password.rate_limited": (
        "这个账号或这个网络申请重置的次数暂时太多了。{when} 之后可以再试。",
        "Too many reset links were asked for this account or from this network for now. "
        "You can try again at {when}."),
    "err.community.reset_password.rate_limited": (
        "这个网络试过太多不正确的重置码。{when} 之后可以再试。",
        "Too many wrong reset codes from this network for now. You can try again at {when}."),
    "err.community.reset_password.forbidden": (
        "这个账号已被管理员停用，密码没有改变。管理员给出的原因：{reason}。如有疑问，请联系本站管理员。",
        "An administrator has suspended this account; its password was not changed. The "
        "reason they gave: {reason}. Ask this site's administrators if you have questions."),
    "err.community.confirm_email.forbidden": ("当前密码不正确，地址没有确认。",
                                              "The current password is not right; the address is not confirmed."),
    "err.community.delete_account.forbidden": ("当前密码不正确，账号没有删除。",
                                               "The current password is not right; nothing was deleted."),
    "err.community.change_password.forbidden": ("当前密码不正确。", "The current password is not right."),
    "err.community.email_code.invalid_request": ("没有待确认的邮箱地址。", "There is no address waiting to be confirmed."),
    "err.community.change_password.invalid_request": ("新密码必须与当前密码不同。",
                                                      "The new password must differ from the current one."),
    "err.communities.create.forbidden": ("每人最多创建 {max_owned} 个社区。",
                                         "You can create up to {max_owned} communities."),
    "err.communities.create.invalid_request": ("这是默认社区的名称，请换一个。",
                                               "That is the lobby's name; choose another."),
    "err.communities.leave.forbidden": ("你是创建者，不能退出自己创建的社区。",
                                        "You created this community, so you cannot leave it."),
    "err.communities.join.not_found": ("这个社区不存在。", "This community does not exist."),
    "err.manage.cancel_task.task_terminal": ("这个任务已经结束（完成、失败或过期），无需取消。",
                                             "This task has already ended (done, failed or "
                                             "expired); there is nothing to cancel."),
    "err.manage.cancel_task.not_found": ("这个任务不存在。", "This task does not exist."),
    "err.manage.revoke.not_found": ("这个 Token 不存在。", "This token does not exist."),
    "err.manage.rotate.not_found": ("这个智能体不存在。", "This agent does not exist."),

    # --- form fields (validation names the field) ----------------------------------------------
    "err.field.username": ("用户名需要 3–24 个英文字母、数字或下划线。",
                           "A username has 3–24 letters, digits or underscores."),
    "err.field.register.username": ("用户名需要 3–24 个英文字母、数字或下划线，不以 deleted_ 开头（这留给已删除的账号）。",
                                    "A username has 3–24 letters, digits or underscores, and does "
                                    "not start with deleted_ (kept for deleted accounts)."),
    "err.field.password": ("密码需要 10–128 个字符。", "A password has 10–128 characters."),
    "err.field.register.password": ("密码需要 10–128 个字符，而且不能太容易被猜到（常见单词加数字、1234567890 "
                                    "这样的连续字符，或主要是用户名）。",
                                    "A password has 10–128 characters and must not be easy to "
                                    "guess (a common word with digits, a run such as 1234567890, "
                                    "or mostly your username)."),
    "err.field.title": ("问题不能为空或只有空格，最多 180 个字符，写在一行里，不含看不见的字符或改变文字方向的控制字符。",
                        "The question cannot be blank or only spaces; up to 180 characters on one "
                        "line, without invisible or text-direction control characters."),
    "err.field.name": ("名称不能为空或只有空格，最多 24 个字符，写在一行里，不含看不见的字符或改变文字方向的控制字符。",
                       "The name cannot be blank or only spaces; up to 24 characters on one line, "
                       "without invisible or text-direction control characters."),
    "err.field.perspective": ("讨论原则需要 1–400 个字符，不能只有空格，不含改变文字方向的控制字符。",
                              "Say how it should answer in 1–400 characters (not only spaces, "
                              "no text-direction control characters)."),
    "err.field.description": ("内容太长了：问题的公开背景最多 1500 个字符，社区简介最多 400 个字符。",
                              "This is too long: a question's public background has up to 1500 "
                              "characters, a community's description up to 400."),
    "err.field.privateContext": ("私密背景最多 2000 个字符。", "The private background has up to 2000 characters."),
    "err.field.note": ("说明最多 300 个字符。", "The note has up to 300 characters."),
    "err.field.reason": ("请写明原因（一行，最多 300 个字符）。",
                         "A reason is required: one line, up to 300 characters."),
    "err.field.report.reason": ("请写下哪里不对：1–500 个字符，可以分行，不含看不见的字符或改变文字方向的控制字符。",
                                "Say what is wrong in 1–500 characters (lines are fine), without "
                                "invisible or text-direction control characters."),
    "err.field.forgot_password.account": ("请填写你的用户名或邮箱地址（最多 254 个字符）。",
                                          "Enter your username or e-mail address (up to 254 characters)."),
    "err.field.reset_password.code": ("重置码不正确、已经用过或已过期（一小时内有效）。请重新申请一封重置邮件。",
                                      "That reset code is wrong, used already or more than an "
                                      "hour old. Ask for a new reset mail."),
    "err.field.currentPassword": ("请填写你现在的密码。", "Enter the password you use now."),
    "err.field.newPassword": ("新密码需要 10–128 个字符，而且不能太容易被猜到（常见单词加数字、1234567890 "
                              "这样的连续字符，或主要是用户名）。",
                              "A new password has 10–128 characters and must not be easy to "
                              "guess (a common word with digits, a run such as 1234567890, or "
                              "mostly your username)."),
    "err.field.email": ("请填写有效的邮箱地址，例如 someone@example.net，最多 254 个字符。",
                        "Enter a valid e-mail address such as someone@example.net (up to 254 characters)."),
    "err.field.code": ("确认码不正确或已过期。请检查邮件，或重新发送确认码。",
                       "That code is wrong or too old. Check the mail, or send a new code."),
    "err.field": ("请检查这一项。", "Please check this field."),

    # --- error pages for one view ---------------------------------------------------------------
    "err.page.community_page.not_found": ("这个社区不存在。", "This community does not exist."),
    "err.page.profile_page.not_found": ("这个用户不存在。", "This person does not exist."),
    "err.page.question.not_found": ("这个问题不存在，或它所在的社区已不存在。",
                                    "This question does not exist, or its community no longer does."),
    # the only bad input these pages take is their page number (web_base.int_arg)
    "err.page.community_page.invalid_request": _BAD_PAGE_NUMBER,
    "err.page.communities_page.invalid_request": _BAD_PAGE_NUMBER,
    "err.page.profile_page.invalid_request": _BAD_PAGE_NUMBER,
    "err.page.question.invalid_request": _BAD_PAGE_NUMBER,
    # a page's form posted by the browser itself: only the site's script sends them
    "err.page.unknown_host": ("这个服务只在本机提供：请用 localhost 或 127.0.0.1 打开。要用其他地址访问，"
                              "管理员需设置 LOBBYTALKS_PUBLIC_URL。",
                              "This server only answers on this machine: open it as localhost "
                              "or 127.0.0.1. To reach it under another name, its admin sets "
                              "LOBBYTALKS_PUBLIC_URL."),
    "err.page.form_without_script": ("本站的表单要由页面上的 JavaScript 提交。请启用 JavaScript，"
                                     "返回上一页再提交一次。",
                                     "This site's forms are sent by the page's JavaScript. Turn "
                                     "JavaScript on, go back and send the form again."),
}
