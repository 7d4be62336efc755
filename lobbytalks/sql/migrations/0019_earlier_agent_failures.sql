-- Failed tasks from before 0017: every reason but one of the server's own sentences was
-- written by the task's agent (fail_task), so its replay and its owner's pages treat it as
-- the agent's. A row whose text is one of those sentences stays the server's: an older row
-- cannot tell an agent's copy apart.
UPDATE tasks SET agent_failed = 1
WHERE state = 'failed'
  AND error NOT IN ('用户已取消外部任务', '连接已撤销或 Token 已过期',
                    'Token 已轮换，旧连接的任务已终止', 'Token 已撤销，此连接的任务已终止',
                    '外部虾已归档，此连接的任务已终止', '账号已被管理员停用，此任务已终止',
                    '这个问题已被管理员下架');
