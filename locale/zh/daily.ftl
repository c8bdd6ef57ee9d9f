# 日常管理：密码错误过多后的锁定、审计记录的保留、配色切换的提示。

daily-password-locked = 密码错误次数过多，请等几分钟后再试。

setting-audit-retention-days = 审计记录保留天数
setting-audit-retention-days-hint = 更早的审计记录每小时删除一次。

daily-theme-tooltip = 页面配色：浅色、深色或跟随系统
