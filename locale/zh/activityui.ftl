# 活动筛选、记录详情、新令牌的连接信息和配色方案。

activityui-page-of = 第 { $page } 页，共 { $pages } 页 · { $count } 条记录
activityui-user-placeholder = 名称开头
activityui-model-placeholder = 名称的一部分
activityui-first-byte = 首字节
activityui-details = 请求详情
activityui-open = { $time } 的请求详情
activityui-close = 关闭
activityui-surface = 接口
activityui-path = 路径
activityui-hint = 优先级提示
activityui-score = 分数
activityui-input-tokens = 输入令牌
activityui-output-tokens = 输出令牌
activityui-cached-tokens = 缓存的输入令牌
activityui-error = 错误
activityui-record-id = 记录
